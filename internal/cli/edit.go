package cli

import (
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
	out := e.Answer()
	switch {
	case e.DryRun && e.NoChange == "" && !e.Record:
		return a.finishWrite(o.Project, &out, e.Result, nil, nil, o.JSON)
	case o.JSON:
		return a.writeJSON(out)
	}
	a.printer().Edit(&out, e, o.Project)
	return nil
}
