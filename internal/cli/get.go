package cli

import (
	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

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
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return err
		}
		s, err := ops.Server(g, args[0])
		if err != nil {
			return err
		}
		d := a.op().Detail(g, s, a.mcpCmd())
		if err := a.op().Renderable(g, s, d.View); err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(d)
		}
		a.printer().Server(d)
		return nil
	})
	return c
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
