package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

// Version is piagent's version (ops.Version).
const Version = ops.Version

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print piagent's version",
		Args:  cobra.NoArgs,
		RunE: run(func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(a.env.Stdout, "piagent %s (helper protocol %s/%d)\n", Version, ops.HelperProtocol, ops.HelperVersion)
			return nil
		}),
	}
}

func (a *app) guardCommand() *cobra.Command {
	g := &cobra.Command{
		Use:   "guard",
		Short: "The tool-call guard the Pi extension asks",
		Args:  cobra.NoArgs,
	}
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Answer the Pi extension over stdin/stdout (newline-delimited JSON, see docs/helper-protocol.md)",
		Args:  cobra.NoArgs,
	}
	serve.Flags().String("project", "", "the directory Pi started in (default: the working directory)")
	serve.RunE = run(func(c *cobra.Command, _ []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		// A helper lives as long as the session: the main's pace for that
		// (gcpolicy.LongLived), not the one-shot commands' relaxed one.
		var pace ops.Pace
		if a.env.LongLived != nil {
			pace = a.env.LongLived()
		}
		return a.op().ServeHelper(dir, a.env.Stdin, a.env.Stdout, pace)
	})
	g.AddCommand(serve)
	return g
}
