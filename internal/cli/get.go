package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/ops"
)

type contributionJSON = ops.Contribution

// getJSON is get --json: the server's list row, its definition for a
// person to read (ops.View), and how its last confined run ended.
type getJSON struct {
	serverJSON
	ops.View
	// LastRun is how the server's last confined run ended, when it failed:
	// the sandbox may have stopped it (Fix names the grant).
	LastRun *ops.LastRun `json:"lastRun,omitempty"`
}

// flagJSON is one thing the preview draws attention to.
type flagJSON = ops.Flag

// getData is a server's definition for a person to read (ops.View), with
// its list row and its last failed run.
func (a *app) getData(g *gate.Gate, s *gate.Server) getJSON {
	out := getJSON{serverJSON: a.serverRow(g, s), View: a.op().View(g, s)}
	if lr, ok := a.op().LastRun(g.Project, s.Name, a.mcpCmd()); ok {
		out.LastRun = &lr
	}
	return out
}

func (a *app) getCommand() *cobra.Command {
	c := &cobra.Command{
		Use: "get NAME",
		Example: `  piagent-mcp get internal
  piagent-mcp get internal --json`,
		Short: "Show a server's merged definition (what will run), its state and where every part came from",
		Args:  exactArgs(1, "NAME"),
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(nil)
	c.RunE = run(func(c *cobra.Command, args []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		s, err := ops.Server(g, args[0])
		if err != nil {
			return err
		}
		d := a.getData(g, s)
		if err := a.op().Renderable(g, s, d.View); err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(d)
		}
		a.printServer(g, s, d)
		return nil
	})
	return c
}

func (a *app) printServer(g *gate.Gate, s *gate.Server, d getJSON) {
	w := a.env.Stdout
	disp := func(p string) string { return ops.Display(a.env.Home, g.View.Cwd, p) }
	fmt.Fprintf(w, "name:        %s\n", s.Name)
	if s.Reason == "" || s.Reason == s.State {
		fmt.Fprintf(w, "state:       %s\n", s.State) // not "ready (ready)"
	} else {
		fmt.Fprintf(w, "state:       %s (%s)\n", s.State, s.Reason)
	}
	if !s.Fix.IsZero() {
		fmt.Fprintf(w, "fix:         %s\n", a.fix(s.Fix))
	}
	fmt.Fprintf(w, "scope:       %s\n", s.Config.Scope)
	src := disp(s.Config.Source.File)
	if k := s.Config.Source.Kind; k != "" {
		src += " (" + k + ")"
	}
	fmt.Fprintf(w, "source:      %s\n", src)
	if !s.Config.AdapterLoads {
		fmt.Fprintf(w, "adapter:     does not load this entry (listed so it is gated)\n")
	}
	if s.Repository {
		fmt.Fprintf(w, "repository:  yes, %s\n", s.Config.RepositoryReason)
	} else {
		fmt.Fprintf(w, "repository:  no\n")
	}
	fmt.Fprintf(w, "transport:   %s\n", d.Transport)
	if len(s.Config.Contributions) > 1 {
		fmt.Fprintf(w, "defined in:\n")
		for _, c := range s.Config.Contributions {
			kind := ""
			if c.Kind != "" {
				kind = " (" + c.Kind + ")"
			}
			owner := "yours"
			if c.Repository {
				owner = "repository"
			}
			fmt.Fprintf(w, "  %s%s [%s, %s]\n", disp(c.File), kind, c.Scope, owner)
		}
	}
	fmt.Fprintf(w, "sandbox:     %s\n", d.Sandbox)
	if r := d.LastRun; r != nil {
		fmt.Fprintf(w, "last run:    %s\n", r.Text)
		fmt.Fprintf(w, "  fix:       %s\n", r.Fix)
	}
	if gr := grantsText(d.View); gr != "" {
		fmt.Fprintf(w, "grants:      %s\n", gr)
	}
	if d.Definition != nil && d.Sandbox != "remote" {
		fmt.Fprintf(w, "environment: the sandbox's default set, plus %s (names; none of Pi's other keys)\n", listOr(d.Environment))
	}
	fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", ops.IndentJSON(d.Definition))
	a.printFlags(g, d.Flags)
	printTools(w, d.Tools, s.Name)
}

// grantsText is what a person let the server reach beyond its profile,
// or "" when nothing.
func grantsText(v ops.View) string {
	gr := v.Grants
	if len(gr.Read)+len(gr.Write)+len(gr.Net) == 0 {
		return ""
	}
	return fmt.Sprintf("read %s; write %s; network %s", listOr(gr.Read), listOr(gr.Write), listOr(gr.Net))
}

// printFlags lists what a person should look at before approving.
func (a *app) printFlags(g *gate.Gate, flags []flagJSON) {
	for _, f := range flags {
		where := ""
		if f.File != "" {
			where = ops.Display(a.env.Home, g.View.Cwd, f.File)
			if f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
			where = " (" + where + ")"
		}
		fmt.Fprintf(a.env.Stdout, "warning: %s: %s%s\n", f.Key, f.Text, where)
	}
}

// maxArgs is cobra.MaximumNArgs with a usage error naming the argument.
func maxArgs(n int, names string) cobra.PositionalArgs {
	return countArgs(func(got int) bool { return got <= n }, "at most "+names)
}

// exactArgs is cobra.ExactArgs with a usage error naming the argument.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return countArgs(func(got int) bool { return got == n }, names)
}

// countArgs refuses a number of arguments ok does not take, naming what the
// command takes.
func countArgs(ok func(got int) bool, takes string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if !ok(len(args)) {
			return usagef("%s takes %s (got %d arguments)", c.CommandPath(), takes, len(args))
		}
		return nil
	}
}
