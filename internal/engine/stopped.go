package engine

import (
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/serverrun"
)

// LastFailure is the record of server name's last run in project (home's
// person) when the run failed: the sandbox may have stopped it. dir is the
// server's state folder, which the record's fix names.
func LastFailure(home, project, name string) (r serverrun.Record, dir string, ok bool) {
	dir = sandbox.ServerStateDir(sandbox.Input{Home: home, Project: project}, name)
	r, ok = serverrun.Read(dir)
	if !ok || r.State != serverrun.Failed {
		return serverrun.Record{}, dir, false
	}
	return r, dir, true
}

// StoppedNotice is the session notice's line for each server of g, not
// disabled, whose last run failed (issue 42): the server, how its run
// ended, and the grant that lets it through, worded for prog. The
// extension's state and `piagent-mcp notice` both take it from here.
func StoppedNotice(home string, g *gate.Gate, prog string) []string {
	var out []string
	for _, s := range g.Servers {
		if s.State == gate.Disabled {
			continue
		}
		if r, dir, ok := LastFailure(home, g.Project, s.Name); ok {
			out = append(out, r.Notice(prog, dir))
		}
	}
	return out
}
