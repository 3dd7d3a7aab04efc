package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) extensionCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "extension",
		Short: "The Pi extension this binary carries",
		Args:  cobra.NoArgs,
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	path := &cobra.Command{
		Use:   "path",
		Short: "Write the Pi extension matching this binary under ~/.pi/piagent and print its folder",
		Long: "Writes the Pi extension that matches this binary's version to\n" +
			"~/.pi/piagent/extension/<version>/ (rewriting any file that differs) and\n" +
			"prints the folder. Install it in Pi with:\n\n" +
			"  pi install \"$(piagent extension path)\"",
		Args: cobra.NoArgs,
	}
	path.RunE = run(func(c *cobra.Command, _ []string) error {
		dir, _, err := a.op().PlaceExtension()
		if err != nil {
			return err
		}
		fmt.Fprintln(a.env.Stdout, dir)
		return nil
	})
	c.AddCommand(path)
	return c
}
