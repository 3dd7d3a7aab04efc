package setup

import (
	"fmt"
	"path/filepath"

	"github.com/piagent/piagent/internal/shquote"
)

// Op is what one Pi package command does.
type Op string

// Ops of an Action.
const (
	OpInstall Op = "install"
	OpRemove  Op = "remove"
)

// Action is one `pi install SOURCE` or `pi remove SOURCE`, global scope.
type Action struct {
	Op     Op     `json:"op"`
	Source string `json:"source"` // the argument given to pi
	Target Kind   `json:"target"` // extension or adapter
	Why    string `json:"why"`
}

// Command is the action as a person would type it.
func (a Action) Command() string { return "pi " + string(a.Op) + " " + shquote.Quote(a.Source) }

// Want is what setup should leave in Pi's package list.
type Want struct {
	// Extension is the absolute folder of this binary's extension.
	Extension string
	// Adapter asks for pi-mcp-adapter 2.36.0 after the extension. False
	// (--no-mcp) leaves whatever adapter entry there is as it is.
	Adapter bool
}

// Status is Pi's package list seen against what setup wants.
type Status struct {
	Extension *Package  `json:"extension"` // the entry of this binary's extension, if listed
	Stale     []Package `json:"stale"`     // other piagent extension entries
	Adapter   *Package  `json:"adapter"`   // the first pi-mcp-adapter entry, if listed
}

// Inspect finds piagent's packages in pkgs.
func Inspect(pkgs []Package, extension string) Status {
	st := Status{Stale: []Package{}}
	for i := range pkgs {
		p := pkgs[i]
		switch p.Kind {
		case KindExtension:
			if st.Extension == nil && filepath.Clean(p.Path) == filepath.Clean(extension) {
				st.Extension = &p
			} else {
				st.Stale = append(st.Stale, p)
			}
		case KindAdapter:
			if st.Adapter == nil {
				st.Adapter = &p
			}
		}
	}
	return st
}

// Ordered reports whether the extension loads before the adapter: true
// when the extension is listed and the adapter is absent or after it.
func (s Status) Ordered() bool {
	return s.Extension != nil && (s.Adapter == nil || s.Extension.Index < s.Adapter.Index)
}

// Problems are what keeps the list from being what w asks, each with its
// fix; none means setup has nothing left to do.
func (s Status) Problems(w Want) []Problem {
	var out []Problem
	if s.Extension == nil {
		out = append(out, Problem{Code: "extension-missing",
			Reason: "the piagent extension that matches this binary is not in Pi's packages",
			Fix:    "run 'piagent setup' (or: pi install \"$(piagent extension path)\")"})
	}
	for _, p := range s.Stale {
		out = append(out, Problem{Code: "extension-stale",
			Reason: fmt.Sprintf("Pi also loads another piagent extension (%s, version %s), which does not match this binary", p.Source, orUnknown(p.Version)),
			Fix:    "run 'piagent setup', which replaces it (or: pi remove " + shquote.Quote(p.Path) + ")"})
	}
	switch {
	case s.Adapter == nil && w.Adapter:
		out = append(out, Problem{Code: "adapter-missing",
			Reason: "pi-mcp-adapter is not in Pi's packages",
			Fix:    "run 'piagent setup' (or: pi install " + AdapterSource + ")"})
	case s.Adapter != nil && w.Adapter && s.Adapter.Version != AdapterVersion:
		out = append(out, Problem{Code: "adapter-version",
			Reason: fmt.Sprintf("Pi's packages list %s; piagent is built against pi-mcp-adapter %s", s.Adapter.Source, AdapterVersion),
			Fix:    "run 'piagent setup' (or: pi install " + AdapterSource + ")"})
	}
	if s.Extension != nil && s.Adapter != nil && !s.Ordered() {
		out = append(out, orderProblem(*s.Adapter))
	}
	return out
}

func orderProblem(adapter Package) Problem {
	p := Problem{Code: "order",
		Reason: fmt.Sprintf("Pi loads %s (packages[%d]) before the piagent extension, so the adapter's handlers run first", adapter.Source, adapter.Index),
		Fix:    "pi remove " + shquote.Quote(adapter.Source) + " && pi install " + shquote.Quote(adapterSourceFor(adapter)),
	}
	if adapter.Object {
		p.Reason += "; its entry carries resource filters, which reinstalling would drop, so setup leaves it"
		p.Fix = "move the " + adapter.Source + " entry after the piagent extension in Pi's settings.json packages, keeping its filters"
	}
	return p
}

// adapterSourceFor is the source setup installs in place of adapter: the
// pinned release, unless the adapter is not setup's to change.
func adapterSourceFor(adapter Package) string {
	if adapter.Version == AdapterVersion {
		return adapter.Source
	}
	return AdapterSource
}

// Plan is what setup will do.
type Plan struct {
	Actions  []Action  `json:"actions"`
	Problems []Problem `json:"problems"` // left for the person, with the fix
	// AddsAdapter is set when no adapter was listed and the plan installs
	// one: setup brought it, so uninstall may remove it.
	AddsAdapter bool `json:"addsAdapter"`
}

// MakePlan turns a package list into the Pi commands that leave this
// binary's extension listed, no other piagent extension, and (when w.Adapter)
// pi-mcp-adapter 2.36.0 listed after the extension. Pi appends what it
// installs and replaces a matching source in place; the plan relies on
// exactly that.
func MakePlan(pkgs []Package, w Want) Plan {
	st := Inspect(pkgs, w.Extension)
	plan := Plan{Actions: []Action{}, Problems: []Problem{}}
	for _, p := range st.Stale {
		plan.Actions = append(plan.Actions, Action{Op: OpRemove, Source: p.Path, Target: KindExtension,
			Why: fmt.Sprintf("another piagent extension (version %s) that does not match this binary", orUnknown(p.Version))})
	}
	installExt := Action{Op: OpInstall, Source: w.Extension, Target: KindExtension, Why: "the piagent extension that matches this binary"}
	a := st.Adapter
	// An extension installed now is appended: after any adapter listed.
	extAfterAdapter := a != nil && (st.Extension == nil || a.Index < st.Extension.Index)
	switch {
	case a == nil:
		if st.Extension == nil {
			plan.Actions = append(plan.Actions, installExt)
		}
		if w.Adapter {
			plan.Actions = append(plan.Actions, Action{Op: OpInstall, Source: AdapterSource, Target: KindAdapter, Why: "the MCP adapter piagent is built against"})
			plan.AddsAdapter = true
		}
	case extAfterAdapter && w.Adapter && !a.Object:
		// Move the adapter after the extension: out, extension in, back in.
		plan.Actions = append(plan.Actions, Action{Op: OpRemove, Source: a.Source, Target: KindAdapter,
			Why: "it is listed before the piagent extension; it is installed again after it"})
		if st.Extension == nil {
			plan.Actions = append(plan.Actions, installExt)
		}
		why := "again, after the piagent extension, so the extension's handlers run first"
		if a.Version != AdapterVersion {
			why += fmt.Sprintf(" (pinned to %s; the list had %s)", AdapterVersion, a.Source)
		}
		plan.Actions = append(plan.Actions, Action{Op: OpInstall, Source: AdapterSource, Target: KindAdapter, Why: why})
	default:
		if st.Extension == nil {
			plan.Actions = append(plan.Actions, installExt)
		}
		if w.Adapter && a.Version != AdapterVersion {
			// Pi replaces a matching npm source in place, filters and position kept.
			plan.Actions = append(plan.Actions, Action{Op: OpInstall, Source: AdapterSource, Target: KindAdapter,
				Why: fmt.Sprintf("pin the adapter to %s, the release piagent is built against (the list had %s)", AdapterVersion, a.Source)})
		}
		if extAfterAdapter {
			p := orderProblem(*a)
			if !w.Adapter && !a.Object {
				p.Reason += "; --no-mcp leaves the adapter as it is"
			}
			plan.Problems = append(plan.Problems, p)
		}
	}
	return plan
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
