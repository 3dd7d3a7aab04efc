package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

const quarantineLong = `Files that decide what Pi loads or what git runs (the project's .pi folder,
.git/hooks, .git/config, .git/commondir, .git/info, .git/worktrees) are
recorded before every session piagent pi starts. When one of them changed
during the session, piagent puts back the version from the session's start
and moves what it found to a quarantine folder under ~/.pi/piagent/quarantine:
nothing is deleted. piagent pi does not start Pi in a project while one of its
quarantines is unexamined.

Look with 'piagent quarantine show ID' (the files are in the folder it
names). If the change was yours (an edit you made outside Pi during the
session), 'piagent quarantine accept ID' puts it back in place; otherwise
'piagent quarantine discard ID' removes the quarantine.`

func (a *app) quarantineCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "quarantine",
		Short: "Look at, accept or discard what piagent put back after a session",
		Long:  quarantineLong,
		Args:  cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List quarantines, unexamined first",
		Args:  cobra.NoArgs,
	}
	listJSON := list.Flags().Bool("json", false, "print JSON")
	list.RunE = run(func(*cobra.Command, []string) error {
		all, err := a.op().Quarantines()
		if err != nil {
			return err
		}
		if *listJSON {
			if all == nil {
				all = []*ops.Quarantine{}
			}
			return a.printJSONValue(all)
		}
		if len(all) == 0 {
			fmt.Fprintln(a.env.Stdout, "no quarantines: nothing piagent watches changed during a session")
			return nil
		}
		for _, q := range all {
			state := "unexamined"
			if q.Examined != "" {
				state = q.Examined
			}
			fmt.Fprintf(a.env.Stdout, "%s  %s  %s  %d path(s), %s\n", q.ID, state, q.Project, len(q.Changes), q.Source)
		}
		return nil
	})
	show := &cobra.Command{
		Use:     "show ID",
		Example: "  piagent quarantine show 20261205-101500-a1b2c3",
		Short:   "Say what a quarantine holds and where",
		Args:    cobra.ExactArgs(1),
	}
	showJSON := show.Flags().Bool("json", false, "print JSON")
	show.RunE = run(func(_ *cobra.Command, args []string) error {
		q, err := a.op().ReadQuarantine(args[0])
		if err != nil {
			return err
		}
		if *showJSON {
			return a.printJSONValue(q)
		}
		render.Quarantine(a.env.Stdout, q, a.op().QuarantineFolder(q.ID))
		return nil
	})
	accept := &cobra.Command{
		Use:     "accept ID",
		Example: "  piagent quarantine accept 20261205-101500-a1b2c3",
		Short:   "The change was yours: put what the quarantine holds back in place",
		Args:    cobra.ExactArgs(1),
	}
	accept.RunE = run(func(_ *cobra.Command, args []string) error {
		q, replaced, err := a.op().AcceptQuarantine(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(a.env.Stdout, "put back in %s: %s; what it replaced is kept in %s\n", q.Project,
			strings.Join(ops.ChangedPaths(q), ", "), replaced)
		return nil
	})
	discard := &cobra.Command{
		Use:     "discard ID",
		Example: "  piagent quarantine discard 20261205-101500-a1b2c3",
		Short:   "The change was not yours: remove the quarantine and what it holds",
		Args:    cobra.ExactArgs(1),
	}
	discard.RunE = run(func(_ *cobra.Command, args []string) error {
		if err := a.op().DiscardQuarantine(args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.env.Stdout, "discarded quarantine %s\n", args[0])
		return nil
	})
	c.AddCommand(list, show, accept, discard)
	return c
}

func (a *app) printJSONValue(v any) error {
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
