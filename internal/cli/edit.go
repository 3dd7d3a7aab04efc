package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

var editShort = map[string]string{
	"remove":  "Remove a server from the file that holds its winning definition (or --scope's file)",
	"enable":  "Switch a disabled server back on",
	"disable": "Keep a server's definition but switch it off (disabled: true; a repository server: in piagent's own record); its approval is kept",
}

func (a *app) editCommand(verb string) *cobra.Command {
	c := &cobra.Command{
		Use:     verb + " NAME",
		Example: `  piagent-mcp ` + verb + ` internal`,
		Short:   editShort[verb],
		Args:    exactArgs(1, "NAME"),
	}
	scope := c.Flags().String("scope", "", "the file to write: "+strings.Join(ops.WriteScopes, ", ")+" (default: where the server is defined)")
	dryRun := c.Flags().Bool("dry-run", false, "print the file as it would read and change nothing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	_ = c.RegisterFlagCompletionFunc("scope", completeScopes)
	switch verb {
	case "enable":
		c.ValidArgsFunction = a.completeServers(func(state string, _ bool) bool { return state == ops.Disabled })
	case "disable":
		c.ValidArgsFunction = a.completeServers(func(state string, _ bool) bool { return state != ops.Disabled })
	default:
		c.ValidArgsFunction = a.completeServers(nil)
	}
	c.RunE = run(func(c *cobra.Command, args []string) error {
		project, err := a.projectDir(c)
		if err != nil {
			return err
		}
		return a.edit(editOptions{Verb: verb, Name: args[0], Project: project, Scope: *scope,
			ScopeSet: c.Flags().Changed("scope"), DryRun: *dryRun, JSON: *asJSON})
	})
	return c
}

// editOptions are the inputs of remove, enable and disable.
type editOptions struct {
	Verb     string // remove, enable or disable
	Name     string
	Project  string // absolute
	Scope    string // the file to write, when ScopeSet
	ScopeSet bool
	DryRun   bool
	JSON     bool
}

// edit removes, enables or disables one server (ops.Edit), then says what
// changed.
func (a *app) edit(o editOptions) error {
	e, err := a.op().Edit(ops.EditOptions{Verb: o.Verb, Name: o.Name, Project: o.Project, Scope: o.Scope, ScopeSet: o.ScopeSet, DryRun: o.DryRun})
	if err != nil {
		return err
	}
	out := ops.NewWriteResult(o.Verb)
	out.Name, out.DryRun, out.Scope, out.File, out.Changed = e.Server.Name, e.DryRun, e.Scope, e.File, e.Changed
	out.DecisionDropped, out.FileRemoved = e.DecisionDropped, e.FileRemoved
	out.Notes = append(out.Notes, e.Notes...)
	switch {
	case e.NoChange != "":
		return a.noChange(out, e.File, e.NoChange, o.JSON)
	case e.Record:
		return a.printRecord(&out, e, o)
	case e.DryRun:
		return a.finishWrite(o.Project, &out, e.Result, nil, nil, o.JSON)
	case o.JSON:
		return a.writeJSON(out)
	}
	a.printEdit(&out, e, o.Project)
	return nil
}

// printRecord says what a switch in piagent's own record did.
func (a *app) printRecord(out *ops.WriteResult, e ops.Edited, o editOptions) error {
	if o.JSON {
		return a.writeJSON(out)
	}
	s, verb := e.Server, e.Verb
	w := a.env.Stdout
	if o.DryRun {
		fmt.Fprintf(w, "would %s %s for this project in piagent's own record (%s)\n", verb, s.Name, ops.Display(a.env.Home, o.Project, out.File))
		fmt.Fprintln(w, "dry run: nothing written")
		return nil
	}
	fmt.Fprintf(w, "%s %s for this project (piagent's own record; no file in the repository changed)\n", ops.EditPast[verb], s.Name)
	if verb == "disable" {
		a.printKept(s.Name, s.State)
	}
	a.printNotes(out.Notes)
	return nil
}

// printEdit says what an edit did, for a person.
func (a *app) printEdit(out *ops.WriteResult, e ops.Edited, project string) {
	verb, s := out.Action, e.Server
	w := a.env.Stdout
	fmt.Fprintf(w, "%s %s (scope %s)\n", ops.EditPast[verb], s.Name, out.Scope)
	fmt.Fprintf(w, "file: %s\n", out.File)
	if out.FileRemoved {
		fmt.Fprintf(w, "removed %s: nothing was left in it\n", ops.Display(a.env.Home, project, out.File))
	}
	if out.DecisionDropped {
		fmt.Fprintf(w, "dropped the decision for %s in %s\n", s.Name, e.Project)
	}
	if verb == "disable" && s.Repository {
		a.printKept(s.Name, s.State)
	}
	if (verb == "disable" || verb == "enable") && s.Repository && e.InProject && !out.FileRemoved {
		fmt.Fprintf(w, "note: %s is in the repository: the switch may be committed with it\n", ops.Display(a.env.Home, project, out.File))
	}
	a.printNotes(out.Notes)
}

// printKept says which decision a disabled repository server keeps. Only
// a decision that exists is kept (issue 23: "its approval is kept" of a
// server never approved misled).
func (a *app) printKept(name, state string) {
	w := a.env.Stdout
	switch state {
	case ops.PendingApproval, ops.Disabled:
		fmt.Fprintf(w, "it was never approved here; '%s enable %s' switches it back on, still waiting for approval\n", a.mcpCmd(), name)
	case ops.Rejected:
		fmt.Fprintf(w, "its rejection is kept: '%s enable %s' switches it back on, still rejected\n", a.mcpCmd(), name)
	default:
		fmt.Fprintf(w, "its approval is kept: '%s enable %s' switches it back on\n", a.mcpCmd(), name)
	}
}

func (a *app) noChange(out ops.WriteResult, file, msg string, asJSON bool) error {
	out.File = file
	if asJSON {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.env.Stdout, "%s; no change\n", msg)
	return nil
}
