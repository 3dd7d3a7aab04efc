package cli

import (
	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

// projectDir is --project, or the working directory, made absolute
// (ops.ProjectDir).
func (a *app) projectDir(c *cobra.Command) (string, error) {
	return a.op().ProjectDir(projectFlag(c))
}

// projectFlag is --project as given ("": the working directory).
func projectFlag(c *cobra.Command) string {
	p, _ := c.Flags().GetString("project")
	return p
}

// refuseGiven refuses the first of flags given on the command line, with
// format's usage error (it takes the flag's name).
func refuseGiven(c *cobra.Command, format string, flags ...string) error {
	for _, f := range flags {
		if c.Flags().Changed(f) {
			return usagef(format, f)
		}
	}
	return nil
}

// writeJSON prints v as indented JSON on stdout.
func (a *app) writeJSON(v any) error { return render.JSON(a.env.Stdout, v) }

// completeServers offers the project's server names, those keep takes
// (nil: all).
func (a *app) completeServers(keep func(state string, repository bool) bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, s := range ops.Candidates(g, toComplete, keep) {
			out = append(out, cobra.CompletionWithDesc(s[0], s[1]))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
