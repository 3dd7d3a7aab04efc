package cli

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

// approveTools records what a server offers now as its catalogue pin, after
// showing how it differs from the last one: the adapter's cache, and what
// Pi's built-in client last reported.
// With dryRun it records nothing; with asJSON the answer is an ops.Preview,
// the words it shows inside it.
func (a *app) approveTools(project, name string, yes, dryRun, asJSON bool) error {
	g, err := a.op().GateAt(project)
	if err != nil {
		return err
	}
	if asJSON && !yes && !dryRun {
		return usagef("--json accepts tools only with --yes: add --dry-run to see them first")
	}
	if _, err := ops.Server(g, name); err != nil {
		return err
	}
	var text strings.Builder
	w := a.env.Stdout
	if asJSON {
		w = &text
	}
	ch, err := a.op().ToolsChangeOf(g, name)
	s := ch.Server
	render.ToolsChange(w, ch)
	if err != nil {
		return err
	}
	answer := func(accepted bool) error {
		if !asJSON {
			return nil
		}
		return a.writeJSON(ops.Preview{Action: "approve-tools", Server: s.Name, Project: g.Project, State: s.State,
			DryRun: dryRun, Waiting: ch.Waiting(), Accepted: accepted, Preview: text.String()})
	}
	switch {
	case !ch.Waiting():
		fmt.Fprintf(w, "%s's tools are as pinned; no change\n", s.Name)
		return answer(false)
	case dryRun:
		return answer(false)
	}
	if err := a.askConsent(yes, "accepted", "the tools", "approve "+s.Name+" --tools --yes",
		fmt.Sprintf("Accept the tools of %s as shown? [y/N] ", s.Name), fmt.Errorf("not accepted: the changed tools of %s stay blocked", s.Name)); err != nil {
		return err
	}
	if err := a.op().AcceptTools(g, ch); err != nil {
		return err
	}
	fmt.Fprintf(w, "accepted the tools of %s as they are now\n", s.Name)
	return answer(true)
}
