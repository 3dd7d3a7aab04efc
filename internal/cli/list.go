package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) listCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List every MCP server the adapter sees, with its scope, state and source",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return err
		}
		p := a.printer()
		l := a.op().List(g, a.mcpCmd(), *asJSON) // --json streams the rows
		if *asJSON {
			if err := p.ListJSON(l, a.op().Rows(g, a.mcpCmd())); err != nil {
				return err
			}
		} else {
			p.Table(l)
		}
		p.Skipped(l)
		p.Blocks(l)
		if g.StoreErr != nil {
			// Every repository server reads as undecided: say why, and that
			// nothing here is what the person decided.
			fmt.Fprintf(a.env.Stderr, "%s: error: the approval store cannot be used, so every repository server shows as undecided: %v\n", a.name, g.StoreErr)
			for _, h := range storeHints(a.op().ApprovalStore(), g.StoreErr) {
				fmt.Fprintf(a.env.Stderr, "%s: hint: %s\n", a.name, h)
			}
			return attention()
		}
		if l.FullBlock {
			return attention()
		}
		return nil
	})
	return c
}
