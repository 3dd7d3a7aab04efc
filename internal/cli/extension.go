package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
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
		if a.env.Home == "" {
			return refused(errors.New("no home directory: cannot place the extension"), "set HOME")
		}
		dir := ops.ExtensionDir(a.env.Home)
		if _, err := ops.WriteExtension(ops.Extension(), dir); err != nil {
			return refused(fmt.Errorf("cannot write the Pi extension: %w", err))
		}
		fmt.Fprintln(a.env.Stdout, dir)
		return nil
	})
	c.AddCommand(path)
	return c
}
