package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/baseline"
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
		all, err := baseline.List(a.env.Home)
		if err != nil {
			return err
		}
		if *listJSON {
			if all == nil {
				all = []*baseline.Quarantine{}
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
		q, err := a.readQuarantine(args[0])
		if err != nil {
			return err
		}
		if *showJSON {
			return a.printJSONValue(q)
		}
		a.printQuarantine(q)
		return nil
	})
	accept := &cobra.Command{
		Use:     "accept ID",
		Example: "  piagent quarantine accept 20261205-101500-a1b2c3",
		Short:   "The change was yours: put what the quarantine holds back in place",
		Args:    cobra.ExactArgs(1),
	}
	accept.RunE = run(func(_ *cobra.Command, args []string) error {
		if _, err := a.readQuarantine(args[0]); err != nil {
			return err
		}
		q, err := baseline.Accept(a.env.Home, args[0])
		if err != nil {
			return refused(fmt.Errorf("cannot accept quarantine %s: %w", args[0], err),
				"'piagent quarantine show "+args[0]+"' says where its files are; move them by hand and then 'piagent quarantine discard "+args[0]+"'")
		}
		fmt.Fprintf(a.env.Stdout, "put back in %s: %s; what it replaced is kept in %s\n", q.Project,
			strings.Join(changedPaths(q), ", "), filepath.Join(baseline.Folder(a.env.Home, q.ID), "replaced"))
		return nil
	})
	discard := &cobra.Command{
		Use:     "discard ID",
		Example: "  piagent quarantine discard 20261205-101500-a1b2c3",
		Short:   "The change was not yours: remove the quarantine and what it holds",
		Args:    cobra.ExactArgs(1),
	}
	discard.RunE = run(func(_ *cobra.Command, args []string) error {
		if _, err := a.readQuarantine(args[0]); err != nil && !errors.Is(err, errUnreadableQuarantine) {
			return err
		}
		if err := baseline.Discard(a.env.Home, args[0]); err != nil {
			return refused(err)
		}
		fmt.Fprintf(a.env.Stdout, "discarded quarantine %s\n", args[0])
		return nil
	})
	c.AddCommand(list, show, accept, discard)
	return c
}

var errUnreadableQuarantine = errors.New("unreadable quarantine record")

// readQuarantine reads one quarantine, or says how to find the right ID.
func (a *app) readQuarantine(id string) (*baseline.Quarantine, error) {
	if _, err := os.Lstat(baseline.Folder(a.env.Home, id)); err != nil || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, usageErr(fmt.Errorf("no quarantine %q", id), "'piagent quarantine list' shows every quarantine")
	}
	q, err := baseline.Read(a.env.Home, id)
	if err != nil {
		return nil, &cliError{code: exitAttention, err: fmt.Errorf("%w: %v", errUnreadableQuarantine, err),
			hints: []string{"look in " + baseline.Folder(a.env.Home, id) + " yourself, then 'piagent quarantine discard " + id + "'"}}
	}
	return q, nil
}

func changedPaths(q *baseline.Quarantine) []string {
	var out []string
	for _, k := range q.Changes {
		out = append(out, k.Path)
	}
	return out
}

func (a *app) printQuarantine(q *baseline.Quarantine) {
	w := a.env.Stdout
	state := "unexamined: piagent pi will not start Pi in this project until you accept or discard it"
	if q.Examined != "" {
		state = q.Examined
	}
	dir := baseline.Folder(a.env.Home, q.ID)
	fmt.Fprintf(w, "quarantine %s\n  project: %s\n  when:    %s, %s\n  state:   %s\n  files:   %s\n", q.ID, q.Project,
		q.When.Local().Format("2006-01-02 15:04:05"), q.Source, state, filepath.Join(dir, "files"))
	for _, k := range q.Changes {
		what := map[string]string{"added": "appeared", "removed": "was removed", "changed": "changed"}[k.Change]
		fmt.Fprintf(w, "  %s %s", k.Path, what)
		switch {
		case k.Kept && k.Restored && k.Change == "added":
			fmt.Fprint(w, "; moved to the quarantine")
		case k.Kept && k.Restored:
			fmt.Fprint(w, "; what was there is in the quarantine, the version from the session's start is back")
		case k.Restored:
			fmt.Fprint(w, "; the version from the session's start is back")
		case k.Kept:
			fmt.Fprint(w, "; what was there is in the quarantine, but the older version could not be put back")
		default:
			fmt.Fprint(w, "; left as it is")
		}
		if k.Note != "" {
			fmt.Fprintf(w, " (%s)", k.Note)
		}
		fmt.Fprintln(w)
	}
	if q.Examined == "" {
		fmt.Fprintf(w, "if the change was yours: piagent quarantine accept %s\nif not:                 piagent quarantine discard %s\n", q.ID, q.ID)
	}
}

func (a *app) printJSONValue(v any) error {
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
