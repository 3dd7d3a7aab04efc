package cli

import (
	"github.com/piagent/piagent/internal/ops"
)

// lastFailure is the record of server name's last run in project when the
// run failed: the sandbox may have stopped it.
func (a *app) lastFailure(project, name string) (ops.RunRecord, bool) {
	return a.op().LastFailure(project, name)
}

func (a *app) failureText(r ops.RunRecord) string { return r.Text() }

// failureFix words the grant that lets a stopped server through.
func (a *app) failureFix(r ops.RunRecord) string {
	return r.Fix(a.mcpCmd(), a.op().ServerStateDir(r.Project, r.Server))
}
