package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

func (a *app) doctorCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Explain every server's state, what it needs and the command that fixes it; exit 1 when MCP needs attention",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return err
		}
		d := a.op().Doctor(g, ops.DiagnoseOptions{Extension: ops.ExtensionDir(a.env.Home), Tmp: tempDir(a.env), Prog: a.mcpCmd()})
		if *asJSON {
			if err := a.writeJSON(d); err != nil {
				return err
			}
		} else {
			a.printer().Doctor(d)
		}
		if d.Attention {
			return attention()
		}
		return nil
	})
	return c
}

func (a *app) noticeCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "notice",
		Short: "Print the session notice: servers waiting for a decision or missing setup (PIAGENT_NO_MCP_NOTICE=1 silences it)",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON: {\"notice\": [lines]}")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		if a.env.Getenv("PIAGENT_NO_MCP_NOTICE") == "1" {
			if *asJSON {
				return a.writeJSON(map[string][]string{"notice": {}})
			}
			return nil
		}
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return err
		}
		if *asJSON {
			lines := a.op().Notice(g, a.mcpCmd())
			if lines == nil {
				lines = []string{}
			}
			return a.writeJSON(map[string][]string{"notice": lines})
		}
		for _, l := range a.op().Notice(g, a.mcpCmd()) {
			fmt.Fprintln(a.env.Stdout, l)
		}
		return nil
	})
	return c
}
