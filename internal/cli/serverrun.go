package cli

import (
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/serverrun"
)

// lastFailure is the record of server name's last run in project when the
// run failed: the sandbox may have stopped it.
func (a *app) lastFailure(project, name string) (serverrun.Record, bool) {
	r, ok := serverrun.Read(sandbox.ServerStateDir(sandbox.Input{Home: a.env.Home, Project: project}, name))
	if !ok || r.State != serverrun.Failed {
		return serverrun.Record{}, false
	}
	return r, true
}

func (a *app) failureText(r serverrun.Record) string { return r.Text() }

func (a *app) failureFix(r serverrun.Record) string {
	return r.Fix(a.mcpCmd(), sandbox.ServerStateDir(sandbox.Input{Home: a.env.Home, Project: r.Project}, r.Server))
}
