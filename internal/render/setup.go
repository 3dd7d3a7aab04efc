package render

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/ops"
)

// Setup says what setup did (or, in a dry run, would do), and what the
// servers of its preset still need (on stderr).
func (p *Printer) Setup(out *ops.SetupResult) {
	w := p.Out
	home := p.Home
	if out.Pi != nil {
		fmt.Fprintf(w, "pi         %s (%s)\n", out.Pi.Version, ops.Display(home, "", out.Pi.Path))
	}
	if out.Node != nil {
		fmt.Fprintf(w, "node       %s (%s)\n", out.Node.Version, ops.Display(home, "", out.Node.Path))
	}
	would := ""
	if out.DryRun {
		would = "would "
	}
	if len(out.ExtensionFile) > 0 {
		fmt.Fprintf(w, "extension  %swrite %s (%d files)\n", would, ops.Display(home, "", out.Extension), len(out.ExtensionFile))
	}
	for _, act := range out.Actions {
		verb := "ran"
		if out.DryRun {
			verb = "would run"
		}
		fmt.Fprintf(w, "%s: %s\n    %s\n", verb, act.Command, act.Why)
	}
	if len(out.Actions) == 0 {
		fmt.Fprintln(w, "packages   nothing to install: Pi's packages already hold what setup installs")
	}
	if pr := out.Preset; pr != nil {
		fmt.Fprintf(w, "preset %s (scope %s, %s)\n", pr.Preset, pr.Scope, ops.Display(home, "", pr.File))
		skipped := false
		for _, s := range pr.Servers {
			fmt.Fprintf(w, "  %-16s %s\n", s.ID, PresetServerText(s))
			skipped = skipped || s.Action == "skipped"
		}
		if skipped {
			fmt.Fprintf(w, "  (once it is there: piagent mcp preset %s)\n", pr.Preset)
		}
	}
	Needs(p.Err, out.Needs)
	switch {
	case out.DryRun:
		for _, pr := range out.Problems {
			fmt.Fprintf(w, "problem: %s\n  fix: %s\n", pr.Reason, pr.Fix)
		}
		fmt.Fprintln(w, "dry run: nothing changed")
	case !out.Changed:
		fmt.Fprintln(w, "no change")
	case len(out.Problems) == 0:
		fmt.Fprintln(w, "start Pi with: piagent pi")
	}
}

// Check says what setup --check found installed, in which versions.
func (p *Printer) Check(out *ops.SetupCheck) {
	w := p.Out
	home := p.Home
	row := func(name, version, where string) {
		fmt.Fprintf(w, "%-10s %-8s %s\n", name, OrDash(version), where)
	}
	if out.Pi != nil {
		row("pi", out.Pi.Version, ops.Display(home, "", out.Pi.Path))
	} else {
		row("pi", "", "missing")
	}
	if out.Node != nil {
		row("node", out.Node.Version, ops.Display(home, "", out.Node.Path))
	}
	if e := out.Extension; e != nil {
		row("extension", e.Version, fmt.Sprintf("%s (packages[%d])", ops.Display(home, "", e.Path), e.Index))
	} else {
		row("extension", "", "missing")
	}
	if ad := out.Adapter; ad != nil {
		row("adapter", out.AdapterInstalled, fmt.Sprintf("%s (packages[%d])", ad.Source, ad.Index))
	} else if out.WantsAdapter() {
		row("adapter", "", "missing")
	} else {
		row("adapter", "", "not wanted (setup --no-mcp)")
	}
	if pb := out.Piagent; pb != nil {
		row("piagent", pb.Version, ops.Display(home, "", pb.Path)+" ("+pb.Via+")")
	} else {
		row("piagent", "", "missing")
	}
	switch {
	case out.Extension != nil && out.Adapter != nil && out.Ordered:
		fmt.Fprintln(w, "order      the piagent extension loads before the adapter")
	case out.Extension != nil && out.Adapter != nil:
		fmt.Fprintln(w, "order      the adapter loads before the piagent extension")
	}
	fmt.Fprintf(w, "settings   %s\n", ops.Display(home, "", out.Settings))
	for _, pr := range out.Problems {
		fmt.Fprintf(w, "problem: %s\n  fix: %s\n", pr.Reason, pr.Fix)
	}
	if out.OK {
		fmt.Fprintln(w, "ok")
	}
}

// Uninstall says what uninstall ran, removed and kept.
func (p *Printer) Uninstall(out *ops.UninstallResult) {
	w := p.Out
	for _, act := range out.Actions {
		fmt.Fprintf(w, "ran: %s\n", act.Command)
	}
	for _, r := range out.Removed {
		fmt.Fprintf(w, "removed %s\n", ops.Display(p.Home, "", r))
	}
	for _, k := range out.Kept {
		fmt.Fprintf(w, "kept %s\n", k)
	}
	if !out.Changed {
		fmt.Fprintln(w, "no change")
	}
}

// Needs lists on w what the servers need before their first call.
func Needs(w io.Writer, needs []ops.Need) {
	if len(needs) == 0 {
		return
	}
	fmt.Fprintln(w, "before the first call:")
	for _, n := range needs {
		fmt.Fprintf(w, "  %s: %s\n", n.Server, n.Text)
	}
}

// Words for what an apply did with each server.
var presetActionText = map[string]string{
	"added":     "added",
	"restored":  "restored to the baseline",
	"kept":      "kept your definition (--replace restores the baseline)",
	"unchanged": "matches the baseline",
	"skipped":   "not added",
}

// PresetServerText is what an apply did with one server, in words.
func PresetServerText(s ops.PresetServer) string {
	if s.Action == "skipped" {
		return "not added: needs " + s.Missing
	}
	return presetActionText[s.Action]
}

// Presets lists the presets: each one's servers, what they need, and the
// settings it writes where unset.
func Presets(w io.Writer, all []ops.Preset) {
	for _, p := range all {
		fmt.Fprintf(w, "%s: %s\n", p.Name, p.Purpose)
		if len(p.Servers) == 0 {
			fmt.Fprintln(w, "  no servers")
		}
		for _, s := range p.Servers {
			fmt.Fprintf(w, "  %s\n", s.ID)
			for _, n := range s.Needs {
				fmt.Fprintf(w, "    needs %s\n", n.Text)
			}
		}
		var keys []string
		for _, k := range slices.Sorted(maps.Keys(p.Settings)) {
			v, _ := json.Marshal(p.Settings[k])
			keys = append(keys, k+"="+string(v))
		}
		if len(keys) > 0 {
			fmt.Fprintf(w, "  settings (where unset): %s\n", strings.Join(keys, ", "))
		}
	}
}

// Applied says what a preset apply did with each server and setting (out
// is its answer); FinishWrite's words follow it.
func Applied(w io.Writer, ap ops.Applied, out *ops.WriteResult) {
	fmt.Fprintf(w, "preset %s (scope %s)\n", ap.Preset, ap.Scope)
	for _, s := range out.Servers {
		fmt.Fprintf(w, "  %-16s %s\n", s.ID, PresetServerText(s))
	}
	if len(ap.Settings) > 0 {
		fmt.Fprintf(w, "  settings         set %s\n", strings.Join(ap.Settings, ", "))
	}
	if !ap.Result.Changed && !out.DryRun {
		fmt.Fprintln(w, "no change")
	}
}
