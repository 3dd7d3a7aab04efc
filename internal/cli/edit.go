package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

var editShort = map[string]string{
	"remove":  "Remove a server from the file that holds its winning definition (or --scope's file)",
	"enable":  "Switch a disabled server back on",
	"disable": "Keep a server's definition but switch it off (disabled: true; a repository server: in piagent's own record); its approval is kept",
}

var editPast = map[string]string{"remove": "removed", "enable": "enabled", "disable": "disabled"}

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
		c.ValidArgsFunction = a.completeServers(func(s *gate.Server) bool { return s.State == gate.Disabled })
	case "disable":
		c.ValidArgsFunction = a.completeServers(func(s *gate.Server) bool { return s.State != gate.Disabled })
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

// edit removes, enables or disables one server in the file that defines it
// (or the scope's file), then says what changed.
func (a *app) edit(o editOptions) error {
	verb, project := o.Verb, o.Project
	g, err := a.gateAt(project)
	if err != nil {
		return err
	}
	s, err := ops.Server(g, o.Name)
	if err != nil {
		return err
	}
	out := newResult(verb)
	out.Name, out.DryRun = s.Name, o.DryRun
	var target string
	if o.ScopeSet {
		sf, err := a.op().ScopeFile(o.Scope, project)
		if err != nil {
			return err
		}
		target, out.Scope = sf.Path, sf.Scope
	} else {
		if target, err = a.editTarget(g, s, verb); err != nil {
			return err
		}
		out.Scope = a.op().ScopeOfPath(target, project)
		if out.Scope == "" {
			out.Scope = scopeOfFile(s.Config, target)
		}
	}
	// A repository server's switch is piagent's own record: a file in the
	// repository's .pi/ would make Pi 1.6 trust the project (issue 38).
	var switched bool
	if s.Repository && !o.ScopeSet && (verb == "disable" || verb == "enable") {
		if verb == "disable" || s.State == gate.Disabled && !configDisabled(s) {
			return a.switchRecord(g, s, verb, o)
		}
		// enable: a switch in a file (an older piagent's, /mcp disable's, or
		// the repository's own) is taken back below; the record's too.
		if switched, err = a.setOff(g.Project, s.Name, false, o.DryRun); err != nil {
			return err
		}
	}
	// disabled for the adapter, enabled: false for Pi's built-in client
	disabled := configDisabled(s)
	if verb == "enable" && !disabled && !o.ScopeSet && !switched {
		return a.noChange(out, target, s.Name+" is not disabled", o.JSON)
	}
	// enable of a repository server takes back what disable wrote; a
	// .pi/mcp.json left holding nothing goes with it (issue 23, item 7).
	opts := mcpedit.Options{DryRun: o.DryRun, RemoveIfEmpty: verb == "enable" && s.Repository}
	res, err := a.op().EditFile(g, target, paths.Within(project, target), opts, func(d *mcpedit.Doc) error {
		switch verb {
		case "remove":
			if !d.RemoveServer(s.Name) {
				return a.notInFile(g, s, target)
			}
		case "disable":
			return d.SetDisabled(s.Name, true)
		case "enable":
			if _, err := d.ClearDisabled(s.Name); err != nil {
				return err
			}
			if lowerDisabled(s.Config, target) {
				// A lower layer switches it off: say so explicitly, as
				// the adapter's /mcp enable does.
				return d.SetDisabled(s.Name, false)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	out.File, out.Changed, out.FileRemoved = res.Path, res.Changed, res.Removed
	if !res.Changed {
		return a.noChange(out, res.Path, fmt.Sprintf("%s is already %s in %s", s.Name, editPast[verb], res.Path), o.JSON)
	}
	if o.DryRun {
		return a.finishWrite(project, &out, res, nil, nil, o.JSON)
	}
	if verb == "remove" && (s.Repository || paths.Within(project, res.Path)) && a.goneAfter(project, s.Name) {
		// Only when the server is gone: removing the switch disable wrote
		// to .pi/mcp.json leaves the repository's definition, and its
		// approval with it.
		dropped, err := a.dropDecision(g.Project, s.Name)
		if err != nil {
			return err
		}
		out.DecisionDropped = dropped
	}
	a.op().RefreshLaunch(g.Project)
	out.Notes = append(out.Notes, a.editNotes(verb, s.Name, project)...)
	if o.JSON {
		return a.writeJSON(out)
	}
	a.printEdit(&out, s, g.Project, project)
	return nil
}

// configDisabled reports a configuration entry that switches s off: disabled
// for the adapter, enabled: false for Pi's built-in client.
func configDisabled(s *gate.Server) bool {
	return s.Config.Entry["disabled"] == true || s.Config.Entry["enabled"] == false
}

// switchRecord disables or enables a repository server in piagent's own
// record (approval.Decision.Off), writing no file in the repository.
func (a *app) switchRecord(g *gate.Gate, s *gate.Server, verb string, o editOptions) error {
	off := verb == "disable"
	out := newResult(verb)
	out.Name, out.DryRun, out.Scope, out.File = s.Name, o.DryRun, "piagent", registry.ApprovalStore(a.env.Home)
	if off && s.State == gate.Disabled {
		return a.noChange(out, out.File, fmt.Sprintf("%s is already %s", s.Name, s.Reason), o.JSON)
	}
	changed, err := a.setOff(g.Project, s.Name, off, o.DryRun)
	if err != nil {
		return err
	}
	out.Changed = changed
	if !changed {
		return a.noChange(out, out.File, fmt.Sprintf("%s is already %s for this project", s.Name, editPast[verb]), o.JSON)
	}
	if !o.DryRun {
		a.op().RefreshLaunch(g.Project)
	}
	if off {
		out.Notes = append(out.Notes, "a pi started without 'piagent pi' may still start it; its tool calls are blocked")
	}
	if o.JSON {
		return a.writeJSON(out)
	}
	w := a.env.Stdout
	if o.DryRun {
		fmt.Fprintf(w, "would %s %s for this project in piagent's own record (%s)\n", verb, s.Name, ops.Display(a.env.Home, o.Project, out.File))
		fmt.Fprintln(w, "dry run: nothing written")
		return nil
	}
	fmt.Fprintf(w, "%s %s for this project (piagent's own record; no file in the repository changed)\n", editPast[verb], s.Name)
	if off {
		switch s.State {
		case gate.PendingApproval:
			fmt.Fprintf(w, "it was never approved here; '%s enable %s' switches it back on, still waiting for approval\n", a.mcpCmd(), s.Name)
		case gate.Rejected:
			fmt.Fprintf(w, "its rejection is kept: '%s enable %s' switches it back on, still rejected\n", a.mcpCmd(), s.Name)
		default:
			fmt.Fprintf(w, "its approval is kept: '%s enable %s' switches it back on\n", a.mcpCmd(), s.Name)
		}
	}
	for _, n := range out.Notes {
		fmt.Fprintf(a.env.Stderr, "note: %s\n", n)
	}
	return nil
}

// setOff sets or clears the person's switch for a repository server in the
// approval store and reports whether it changed; a record left holding
// nothing is dropped. With dryRun it only reports.
func (a *app) setOff(project, name string, off, dryRun bool) (bool, error) {
	store := approval.Open(registry.ApprovalStore(a.env.Home))
	if dryRun {
		data, err := store.Load()
		if err != nil {
			return false, refused(err, storeHints(store.Path, err)...)
		}
		dec, _ := data.Get(project, name)
		return dec.Off != off, nil
	}
	store.Waiting = a.waitingFor("the approval store")
	changed := false
	err := store.Update(func(d *approval.Data) error {
		dec, _ := d.Get(project, name)
		if dec.Off == off {
			return nil
		}
		changed, dec.Off = true, off
		if dec.Empty() {
			d.Delete(project, name)
		} else {
			d.Set(project, name, dec)
		}
		return nil
	})
	if err != nil {
		return false, refused(fmt.Errorf("cannot record the switch: %w", err), storeHints(store.Path, err)...)
	}
	return changed, nil
}

// editNotes says where the server is still defined, or still switched,
// after the edit.
func (a *app) editNotes(verb, name, project string) []string {
	after, err := a.gateAt(project)
	if err != nil {
		return nil
	}
	s2, ok := after.Server(name)
	if !ok {
		return nil
	}
	switch {
	case verb == "remove":
		return []string{fmt.Sprintf("%s is still defined in %s", name, ops.Display(a.env.Home, project, s2.Config.Source.File))}
	case verb == "enable" && s2.State == gate.Disabled:
		return []string{fmt.Sprintf("%s is still %s", name, s2.Reason)}
	case verb == "disable" && s2.State != gate.Disabled:
		return []string{fmt.Sprintf("%s is still on: a higher layer sets disabled for it (%s)", name, ops.Display(a.env.Home, project, s2.Config.Source.File))}
	}
	return nil
}

// printEdit says what an edit did, for a person.
func (a *app) printEdit(out *writeResultJSON, s *gate.Server, gateProject, project string) {
	verb := out.Action
	w := a.env.Stdout
	fmt.Fprintf(w, "%s %s (scope %s)\n", editPast[verb], s.Name, out.Scope)
	fmt.Fprintf(w, "file: %s\n", out.File)
	if out.FileRemoved {
		fmt.Fprintf(w, "removed %s: nothing was left in it\n", ops.Display(a.env.Home, project, out.File))
	}
	if out.DecisionDropped {
		fmt.Fprintf(w, "dropped the decision for %s in %s\n", s.Name, gateProject)
	}
	if verb == "disable" && s.Repository {
		// Only a decision that exists is kept (issue 23: "its approval is
		// kept" of a server never approved misled).
		switch s.State {
		case gate.PendingApproval, gate.Disabled:
			fmt.Fprintf(w, "it was never approved here; '%s enable %s' switches it back on, still waiting for approval\n", a.mcpCmd(), s.Name)
		case gate.Rejected:
			fmt.Fprintf(w, "its rejection is kept: '%s enable %s' switches it back on, still rejected\n", a.mcpCmd(), s.Name)
		default:
			fmt.Fprintf(w, "its approval is kept: '%s enable %s' switches it back on\n", a.mcpCmd(), s.Name)
		}
	}
	if (verb == "disable" || verb == "enable") && s.Repository && paths.Within(project, out.File) && !out.FileRemoved {
		fmt.Fprintf(w, "note: %s is in the repository: the switch may be committed with it\n", ops.Display(a.env.Home, project, out.File))
	}
	for _, n := range out.Notes {
		fmt.Fprintf(a.env.Stderr, "note: %s\n", n)
	}
}

func (a *app) noChange(out writeResultJSON, file, msg string, asJSON bool) error {
	out.File = file
	if asJSON {
		return a.writeJSON(out)
	}
	fmt.Fprintf(a.env.Stdout, "%s; no change\n", msg)
	return nil
}

// editTarget is the file an operation acts on without --scope: the file of
// the winning definition; for enable/disable of a repository server the Pi
// project file, where the adapter's /mcp enable and disable write; for
// enable of another server the file whose `disabled` wins. A definition
// that comes from another tool's file is refused, naming that file.
func (a *app) editTarget(g *gate.Gate, s *gate.Server, verb string) (string, error) {
	cs := s.Config
	if cs.Source.Kind != "" {
		return "", a.foreignRefusal(g, s, verb)
	}
	if verb != "remove" && s.Repository {
		sf, err := a.op().ScopeFile(mcpconfig.ScopePiProject, g.View.Cwd)
		return sf.Path, err
	}
	if verb == "enable" {
		for i := len(cs.Contributions) - 1; i >= 0; i-- {
			ct := cs.Contributions[i]
			if _, ok := ct.Entry["disabled"]; ok {
				if ct.Kind != "" || ct.Layer == mcpconfig.LayerAgentPlugin || ct.Layer == mcpconfig.LayerPackage || ct.Layer == mcpconfig.LayerClaudePlugin {
					return "", a.foreignRefusal(g, s, verb)
				}
				return ct.File, nil
			}
		}
	}
	return cs.Source.File, nil
}

// lowerDisabled reports whether the layers below target leave the server
// disabled once target says nothing.
func lowerDisabled(cs *mcpconfig.Server, target string) bool {
	idx := len(cs.Contributions)
	for i, ct := range cs.Contributions {
		if ct.File == target && ct.Kind == "" {
			idx = i
		}
	}
	for i := idx - 1; i >= 0; i-- {
		ct := cs.Contributions[i]
		if ct.File == target && ct.Kind == "" {
			continue
		}
		if v, ok := ct.Entry["disabled"]; ok {
			return v == true
		}
	}
	return false
}

func scopeOfFile(cs *mcpconfig.Server, file string) string {
	for _, ct := range cs.Contributions {
		if ct.File == file {
			return ct.Scope
		}
	}
	return cs.Scope
}

// foreignRefusal refuses to touch a server defined in another tool's file.
func (a *app) foreignRefusal(g *gate.Gate, s *gate.Server, verb string) error {
	cs := s.Config
	disp := func(p string) string { return ops.Display(a.env.Home, g.View.Cwd, p) }
	file, kind := cs.Source.File, cs.Source.Kind
	// For enable, the file that matters is the one whose `disabled` wins.
	if verb == "enable" {
		for i := len(cs.Contributions) - 1; i >= 0; i-- {
			if _, ok := cs.Contributions[i].Entry["disabled"]; ok {
				file, kind = cs.Contributions[i].File, cs.Contributions[i].Kind
				if kind == "" {
					kind = cs.Contributions[i].Layer
				}
				break
			}
		}
	}
	var what string
	switch kind {
	case mcpconfig.LayerPackage:
		what = "a Pi package"
	case mcpconfig.LayerAgentPlugin:
		what = "an Agent Plugin"
	case mcpconfig.LayerClaudePlugin:
		what = "a Claude plugin"
	default:
		what = "the " + kind + " import"
		if cs.Layer == mcpconfig.LayerHost {
			what = "host-config discovery (" + kind + ")"
		}
	}
	err := fmt.Errorf("%s comes from %s: %s belongs to another tool, and piagent never rewrites another tool's configuration",
		s.Name, what, disp(file))
	hints := []string{"to " + verb + " it, edit " + disp(file) + " yourself"}
	var decl []string
	for _, d := range g.View.Imports {
		if slices.Contains(d.Kinds, kind) {
			decl = append(decl, disp(d.File))
		}
	}
	if cs.Layer == mcpconfig.LayerHost {
		for _, o := range g.View.SettingOrigins["hostConfigDiscovery"] {
			decl = append(decl, disp(o.File))
		}
		if len(decl) > 0 {
			hints = append(hints, "or turn hostConfigDiscovery off in "+strings.Join(decl, ", "))
		}
	} else if len(decl) > 0 {
		hints = append(hints, fmt.Sprintf("or drop %q from the imports in %s", kind, strings.Join(decl, ", ")))
	}
	if verb != "remove" {
		hints = append(hints, fmt.Sprintf("or write an override into your own file: %s %s %s --scope pi-global", a.mcpCmd(), verb, s.Name))
	}
	return refused(err, hints...)
}

// notInFile refuses a remove from a file that does not define the server.
func (a *app) notInFile(g *gate.Gate, s *gate.Server, file string) error {
	var in []string
	for _, ct := range s.Config.Contributions {
		if d := ops.Display(a.env.Home, g.View.Cwd, ct.File); !slices.Contains(in, d) {
			in = append(in, d)
		}
	}
	return refused(fmt.Errorf("%s is not defined in %s", s.Name, file), "it is defined in "+strings.Join(in, ", "))
}

// goneAfter reports whether no server of that name is left in the project
// (or the gate cannot tell, which drops the decision as before).
func (a *app) goneAfter(project, name string) bool {
	after, err := a.gateAt(project)
	if err != nil {
		return true
	}
	_, ok := after.Server(name)
	return !ok
}

// dropDecision deletes the project's decision for a removed server and
// reports whether there was one.
func (a *app) dropDecision(project, name string) (bool, error) {
	data, err := approval.Open(registry.ApprovalStore(a.env.Home)).Load()
	had := false
	if err == nil && data != nil {
		_, had = data.Get(project, name)
	}
	if err := a.op().Record(project, name, nil); err != nil {
		return false, err
	}
	return had, nil
}
