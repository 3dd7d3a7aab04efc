package ops

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/preset"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/setup"
)

// UninstallResult is uninstall's answer (its --json).
type UninstallResult struct {
	Action  string        `json:"action"` // "uninstall"
	Purge   bool          `json:"purge"`
	Actions []SetupAction `json:"actions"`
	Removed []string      `json:"removed"` // files and folders deleted
	Kept    []string      `json:"kept"`    // what stays, and why
	Changed bool          `json:"changed"`
}

// UninstallPlan is what uninstall will do: the edge asks the person before
// a purge, with what it deletes.
type UninstallPlan struct {
	Store string // the approval store (every approval decision)
	// Files are piagent's other files and folders --purge deletes, that
	// are there now.
	Files []string
	// Preset is the preset setup seeded, and Seeded its servers, which
	// --purge removes from Global where they still match their baseline.
	Preset string
	Seeded []string
	Global string

	p   *probe
	rec string // the setup record
	out *UninstallResult
}

// PlanUninstall reads what setup installed and what Pi lists, and plans
// the Pi commands that remove it; with purge, what is deleted besides.
func (o *Ops) PlanUninstall(purge bool) (*UninstallPlan, error) {
	p, err := o.probe()
	if err != nil {
		return nil, err
	}
	home := o.Home
	pl := &UninstallPlan{p: p, rec: registry.SetupRecord(home), Store: registry.ApprovalStore(home),
		Global: filepath.Join(home, ".config", "mcp", "mcp.json")}
	rec, _, err := setup.ReadRecord(pl.rec)
	if err != nil {
		return nil, refused(err, text("remove the file by hand; without it uninstall leaves the adapter in place"))
	}
	out := &UninstallResult{Action: "uninstall", Purge: purge, Actions: []SetupAction{}, Removed: []string{}, Kept: []string{}}
	pl.out = out
	for _, pkg := range p.pkgs {
		switch {
		case pkg.Kind == setup.KindExtension && paths.Within(p.where.ExtensionRoot, pkg.Path):
			out.Actions = append(out.Actions, actionOf(setup.Action{Op: setup.OpRemove, Source: pkg.Path, Target: setup.KindExtension, Why: "the piagent extension setup installed"}))
		case pkg.Kind == setup.KindAdapter && rec.AdapterInstalled:
			out.Actions = append(out.Actions, actionOf(setup.Action{Op: setup.OpRemove, Source: pkg.Source, Target: setup.KindAdapter, Why: "setup installed it"}))
		case pkg.Kind == setup.KindAdapter:
			out.Kept = append(out.Kept, pkg.Source+": setup did not install it")
		}
	}
	if len(out.Actions) > 0 && p.pi == nil {
		return nil, ProblemsErr(p.problems)
	}
	if purge {
		if rec.Preset != "" {
			if pr, ok := preset.Get(rec.Preset); ok {
				pl.Preset, pl.Seeded = rec.Preset, pr.Servers
			}
		}
		for _, f := range purgeable(home)[1:] {
			if _, err := os.Lstat(f); err == nil {
				pl.Files = append(pl.Files, f)
			}
		}
	}
	return pl, nil
}

// purgeable is what uninstall --purge deletes: every registry entry of
// piagent's own under ~/.pi (the approval store, the mode store, grants,
// catalogue pins, their locks, piagent's folder and its edit locks), the
// approval store first; the user's policy, which the person writes, stays.
func purgeable(home string) []string {
	dotpi := filepath.Join(home, ".pi")
	out := []string{registry.ApprovalStore(home)}
	for _, e := range registry.List(registry.Input{Home: home}) {
		if e.Owner == registry.Piagent && paths.Within(dotpi, e.Path) && e.Path != dotpi &&
			e.Path != registry.UserPolicy(home) && !slices.Contains(out, e.Path) {
			out = append(out, e.Path)
		}
	}
	return out
}

// Uninstall carries out a plan: Pi's package commands through run, then
// the extension's copies and the record, and with a purge piagent's own
// state and the seeded servers.
func (o *Ops) Uninstall(pl *UninstallPlan, run RunPackage) (*UninstallResult, error) {
	out := pl.out
	for i, act := range out.Actions {
		if err := run(pl.p.pi.Path, act.Action); err != nil {
			return nil, refused(err, text("Pi's output is above; run 'piagent uninstall' again once it is fixed"))
		}
		out.Actions[i].Done = true
	}
	// What setup wrote besides Pi's list: the extension copies and the record.
	if err := out.removeAll(pl.p.where.ExtensionRoot); err != nil {
		return nil, err
	}
	if err := out.removeAll(pl.rec); err != nil {
		return nil, err
	}
	if err := o.purge(pl); err != nil {
		return nil, err
	}
	out.Changed = len(out.Actions) > 0 || len(out.Removed) > 0
	return out, nil
}

// removeAll removes path, when there, and says so.
func (out *UninstallResult) removeAll(path string) error {
	if _, err := os.Lstat(path); err != nil {
		return nil
	}
	if err := os.RemoveAll(path); err != nil {
		return refused(fmt.Errorf("cannot remove %s: %w", path, pathCause(err)))
	}
	out.Removed = append(out.Removed, path)
	return nil
}

// purge deletes piagent's own state and the seeded servers (with --purge),
// or says what stays (without).
func (o *Ops) purge(pl *UninstallPlan) error {
	home, out := o.Home, pl.out
	if !out.Purge {
		out.Kept = append(out.Kept, Display(home, "", pl.Global)+": MCP configuration (--purge removes the preset's servers)",
			Display(home, "", pl.Store)+": approval decisions (--purge removes them)")
		return nil
	}
	if len(pl.Seeded) > 0 {
		if err := o.purgeSeeded(pl.Global, pl.Seeded, out); err != nil {
			return err
		}
	}
	for _, f := range purgeable(home) {
		if err := out.removeAll(f); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(registry.UserPolicy(home)); err == nil {
		out.Kept = append(out.Kept, Display(home, "", registry.UserPolicy(home))+": your tool policy, written by you")
	}
	return nil
}

// purgeSeeded removes from the global file the preset servers that still
// match their baseline; a server the person changed, and every other
// server, stays.
func (o *Ops) purgeSeeded(global string, seeded []string, out *UninstallResult) error {
	home := o.Home
	if _, err := os.Lstat(global); err != nil {
		return nil
	}
	var removed []string
	mo := mcpedit.Options{Mode: 0o600, DirMode: 0o700, LockPath: filepath.Join(registry.LocksDir(home), LockName(global)), Waiting: o.waiting(global)}
	res, err := mcpedit.Update(global, mo, func(d *mcpedit.Doc) error {
		removed = nil
		for _, id := range seeded {
			b, _ := preset.Baseline(id)
			if cur, ok := d.Entry(id); ok && reflect.DeepEqual(cur, b.Entry) {
				d.RemoveServer(id)
				removed = append(removed, id)
			}
		}
		return nil
	})
	if err != nil {
		return refused(fmt.Errorf("%s: %w", global, err), text("the servers stay; remove them with 'piagent mcp remove NAME --scope global'"))
	}
	if res.Changed {
		for _, id := range removed {
			out.Removed = append(out.Removed, global+": "+id)
		}
	}
	for _, id := range seeded {
		if !slices.Contains(removed, id) {
			out.Kept = append(out.Kept, Display(home, "", global)+": "+id+" (absent, or no longer the baseline)")
		}
	}
	return nil
}
