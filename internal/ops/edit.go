package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// EditOptions are the inputs of remove, enable and disable.
type EditOptions struct {
	Verb     string // remove, enable or disable
	Name     string
	Project  string // absolute
	Scope    string // the file to write, when ScopeSet
	ScopeSet bool
	DryRun   bool
}

// EditPast is each edit verb's past tense.
var EditPast = map[string]string{"remove": "removed", "enable": "enabled", "disable": "disabled"}

// Edited is what remove, enable or disable did.
type Edited struct {
	Verb    string
	Project string       // the project's key (the gate's)
	Server  *gate.Server // as it was before the edit
	Scope   string       // "piagent" for piagent's own record
	File    string
	// Record: the switch of a repository server is piagent's own record
	// (approval.Decision.Off), and no file changed.
	Record  bool
	Changed bool
	// NoChange says why nothing changed, when nothing did.
	NoChange        string
	DryRun          bool
	DecisionDropped bool // remove dropped the project's decision for it
	FileRemoved     bool // enable left the file empty and removed it
	// InProject: the file written is inside the project, so a switch
	// written there may be committed with it.
	InProject bool
	// Result is the file edit (its content after, for a dry run).
	Result mcpedit.Result
	Notes  []string
}

// Answer is the edit's --json answer.
func (e Edited) Answer() WriteResult {
	out := NewWriteResult(e.Verb)
	out.Name, out.DryRun, out.Scope, out.File, out.Changed = e.Server.Name, e.DryRun, e.Scope, e.File, e.Changed
	out.DecisionDropped, out.FileRemoved = e.DecisionDropped, e.FileRemoved
	out.Notes = append(out.Notes, e.Notes...)
	return out
}

// Edit removes, enables or disables one server in the file that defines it
// (or the scope's file); a repository server's switch is piagent's own
// record, never a file in the repository (issue 38: a file in its .pi/
// would make Pi 1.6 trust the project).
func (o *Ops) Edit(opt EditOptions) (Edited, error) {
	verb, project := opt.Verb, opt.Project
	g, err := o.Gate(project)
	if err != nil {
		return Edited{}, err
	}
	s, err := Server(g, opt.Name)
	if err != nil {
		return Edited{}, err
	}
	out := Edited{Verb: verb, Project: g.Project, Server: s, DryRun: opt.DryRun}
	var target string
	if opt.ScopeSet {
		sf, err := o.ScopeFile(opt.Scope, project)
		if err != nil {
			return Edited{}, err
		}
		target, out.Scope = sf.Path, sf.Scope
	} else {
		if target, err = o.editTarget(g, s, verb); err != nil {
			return Edited{}, err
		}
		out.Scope = o.ScopeOfPath(target, project)
		if out.Scope == "" {
			out.Scope = scopeOfFile(s.Config, target)
		}
	}
	var switched bool
	if s.Repository && !opt.ScopeSet && (verb == "disable" || verb == "enable") {
		if verb == "disable" || s.State == gate.Disabled && !configDisabled(s) {
			return o.switchRecord(g, s, verb, opt.DryRun)
		}
		// enable: a switch in a file (an older piagent's, /mcp disable's, or
		// the repository's own) is taken back below; the record's too.
		if switched, err = o.setOff(g.Project, s.Name, false, opt.DryRun); err != nil {
			return Edited{}, err
		}
	}
	// disabled for the adapter, enabled: false for Pi's built-in client
	disabled := configDisabled(s)
	if verb == "enable" && !disabled && !opt.ScopeSet && !switched {
		out.File, out.NoChange = target, s.Name+" is not disabled"
		return out, nil
	}
	// enable of a repository server takes back what disable wrote; a
	// .pi/mcp.json left holding nothing goes with it (issue 23, item 7).
	eo := mcpedit.Options{DryRun: opt.DryRun, RemoveIfEmpty: verb == "enable" && s.Repository}
	res, err := o.EditFile(g, target, paths.Within(project, target), eo, func(d *mcpedit.Doc) error {
		switch verb {
		case "remove":
			if !d.RemoveServer(s.Name) {
				return o.notInFile(g, s, target)
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
		return Edited{}, err
	}
	out.Result, out.File, out.Changed, out.FileRemoved = res, res.Path, res.Changed, res.Removed
	out.InProject = paths.Within(project, res.Path)
	if !res.Changed {
		out.NoChange = fmt.Sprintf("%s is already %s in %s", s.Name, EditPast[verb], res.Path)
		return out, nil
	}
	if opt.DryRun {
		return out, nil
	}
	if verb == "remove" && (s.Repository || paths.Within(project, res.Path)) && o.goneAfter(project, s.Name) {
		// Only when the server is gone: removing the switch disable wrote
		// to .pi/mcp.json leaves the repository's definition, and its
		// approval with it.
		dropped, err := o.dropDecision(g.Project, s.Name)
		if err != nil {
			return Edited{}, err
		}
		out.DecisionDropped = dropped
	}
	o.RefreshLaunch(g.Project)
	out.Notes = append(out.Notes, o.editNotes(verb, s.Name, project)...)
	return out, nil
}

// configDisabled reports a configuration entry that switches s off: disabled
// for the adapter, enabled: false for Pi's built-in client.
func configDisabled(s *gate.Server) bool {
	return s.Config.Entry["disabled"] == true || s.Config.Entry["enabled"] == false
}

// switchRecord disables or enables a repository server in piagent's own
// record (approval.Decision.Off), writing no file in the repository.
func (o *Ops) switchRecord(g *gate.Gate, s *gate.Server, verb string, dryRun bool) (Edited, error) {
	off := verb == "disable"
	out := Edited{Verb: verb, Project: g.Project, Server: s, DryRun: dryRun, Scope: "piagent", File: registry.ApprovalStore(o.Home), Record: true}
	if off && s.State == gate.Disabled {
		out.NoChange = fmt.Sprintf("%s is already %s", s.Name, s.Reason)
		return out, nil
	}
	changed, err := o.setOff(g.Project, s.Name, off, dryRun)
	if err != nil {
		return Edited{}, err
	}
	out.Changed = changed
	if !changed {
		out.NoChange = fmt.Sprintf("%s is already %s for this project", s.Name, EditPast[verb])
		return out, nil
	}
	if !dryRun {
		o.RefreshLaunch(g.Project)
	}
	if off {
		out.Notes = append(out.Notes, "a pi started without 'piagent pi' may still start it; its tool calls are blocked")
	}
	return out, nil
}

// setOff sets or clears the person's switch for a repository server in the
// approval store and reports whether it changed; a record left holding
// nothing is dropped. With dryRun it only reports.
func (o *Ops) setOff(project, name string, off, dryRun bool) (bool, error) {
	store := o.store()
	if dryRun {
		data, err := store.Load()
		if err != nil {
			return false, refused(err, StoreHints(store.Path, err)...)
		}
		dec, _ := data.Get(project, name)
		return dec.Off != off, nil
	}
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
		return false, refused(fmt.Errorf("cannot record the switch: %w", err), StoreHints(store.Path, err)...)
	}
	return changed, nil
}

// editNotes says where the server is still defined, or still switched,
// after the edit.
func (o *Ops) editNotes(verb, name, project string) []string {
	after, err := o.Gate(project)
	if err != nil {
		return nil
	}
	s2, ok := after.Server(name)
	if !ok {
		return nil
	}
	switch {
	case verb == "remove":
		return []string{fmt.Sprintf("%s is still defined in %s", name, Display(o.Home, project, s2.Config.Source.File))}
	case verb == "enable" && s2.State == gate.Disabled:
		return []string{fmt.Sprintf("%s is still %s", name, s2.Reason)}
	case verb == "disable" && s2.State != gate.Disabled:
		return []string{fmt.Sprintf("%s is still on: a higher layer sets disabled for it (%s)", name, Display(o.Home, project, s2.Config.Source.File))}
	}
	return nil
}

// editTarget is the file an operation acts on without --scope: the file of
// the winning definition; for enable/disable of a repository server the Pi
// project file, where the adapter's /mcp enable and disable write; for
// enable of another server the file whose `disabled` wins. A definition
// that comes from another tool's file is refused, naming that file.
func (o *Ops) editTarget(g *gate.Gate, s *gate.Server, verb string) (string, error) {
	cs := s.Config
	if cs.Source.Kind != "" {
		return "", o.foreignRefusal(g, s, verb)
	}
	if verb != "remove" && s.Repository {
		sf, err := o.ScopeFile(mcpconfig.ScopePiProject, g.View.Cwd)
		return sf.Path, err
	}
	if verb == "enable" {
		for i := len(cs.Contributions) - 1; i >= 0; i-- {
			ct := cs.Contributions[i]
			if _, ok := ct.Entry["disabled"]; ok {
				if ct.Kind != "" || ct.Layer == mcpconfig.LayerAgentPlugin || ct.Layer == mcpconfig.LayerPackage || ct.Layer == mcpconfig.LayerClaudePlugin {
					return "", o.foreignRefusal(g, s, verb)
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
func (o *Ops) foreignRefusal(g *gate.Gate, s *gate.Server, verb string) error {
	cs := s.Config
	disp := func(p string) string { return Display(o.Home, g.View.Cwd, p) }
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
	hints := []gate.Fix{text("to " + verb + " it, edit " + disp(file) + " yourself")}
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
			hints = append(hints, text("or turn hostConfigDiscovery off in "+strings.Join(decl, ", ")))
		}
	} else if len(decl) > 0 {
		hints = append(hints, text(fmt.Sprintf("or drop %q from the imports in %s", kind, strings.Join(decl, ", "))))
	}
	if verb != "remove" {
		hints = append(hints, gate.Fix{Text: "or write an override into your own file:", Steps: []gate.Step{{Sub: verb, Args: s.Name + " --scope pi-global"}}})
	}
	return refused(err, hints...)
}

// notInFile refuses a remove from a file that does not define the server.
func (o *Ops) notInFile(g *gate.Gate, s *gate.Server, file string) error {
	var in []string
	for _, ct := range s.Config.Contributions {
		if d := Display(o.Home, g.View.Cwd, ct.File); !slices.Contains(in, d) {
			in = append(in, d)
		}
	}
	return refused(fmt.Errorf("%s is not defined in %s", s.Name, file), text("it is defined in "+strings.Join(in, ", ")))
}

// goneAfter reports whether no server of that name is left in the project
// (or the gate cannot tell, which drops the decision as before).
func (o *Ops) goneAfter(project, name string) bool {
	after, err := o.Gate(project)
	if err != nil {
		return true
	}
	_, ok := after.Server(name)
	return !ok
}

// dropDecision deletes the project's decision for a removed server and
// reports whether there was one.
func (o *Ops) dropDecision(project, name string) (bool, error) {
	data, err := approval.Open(registry.ApprovalStore(o.Home)).Load()
	had := false
	if err == nil && data != nil {
		_, had = data.Get(project, name)
	}
	if err := o.Record(project, name, nil); err != nil {
		return false, err
	}
	return had, nil
}
