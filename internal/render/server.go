package render

import (
	"fmt"

	"github.com/piagent/piagent/internal/ops"
)

// Server prints get's answer: a server's state, where every part of its
// definition came from, and the definition.
func (p *Printer) Server(d ops.Detail) {
	w := p.Out
	disp := func(f string) string { return p.disp(d.Cwd, f) }
	fmt.Fprintf(w, "name:        %s\n", d.Name)
	if d.Reason == "" || d.Reason == d.State {
		fmt.Fprintf(w, "state:       %s\n", d.State) // not "ready (ready)"
	} else {
		fmt.Fprintf(w, "state:       %s (%s)\n", d.State, d.Reason)
	}
	if d.Fix != "" {
		fmt.Fprintf(w, "fix:         %s\n", d.Fix)
	}
	fmt.Fprintf(w, "scope:       %s\n", d.Scope)
	src := disp(d.Source.File)
	if k := d.Source.Kind; k != "" {
		src += " (" + k + ")"
	}
	fmt.Fprintf(w, "source:      %s\n", src)
	if !d.AdapterLoads {
		fmt.Fprintf(w, "adapter:     does not load this entry (listed so it is gated)\n")
	}
	if d.Repository {
		fmt.Fprintf(w, "repository:  yes, %s\n", d.Row.RepositoryReason)
	} else {
		fmt.Fprintf(w, "repository:  no\n")
	}
	fmt.Fprintf(w, "transport:   %s\n", d.Transport)
	if len(d.Contributions) > 1 {
		fmt.Fprintf(w, "defined in:\n")
		for _, c := range d.Contributions {
			kind := ""
			if c.Kind != "" {
				kind = " (" + c.Kind + ")"
			}
			owner := "yours"
			if c.RepositoryControlled {
				owner = "repository"
			}
			fmt.Fprintf(w, "  %s%s [%s, %s]\n", disp(c.File), kind, c.Scope, owner)
		}
	}
	fmt.Fprintf(w, "sandbox:     %s\n", d.Sandbox)
	if r := d.LastRun; r != nil {
		fmt.Fprintf(w, "last run:    %s\n", r.Text)
		fmt.Fprintf(w, "  fix:       %s\n", r.Fix)
	}
	if gr := grantsText(d.View); gr != "" {
		fmt.Fprintf(w, "grants:      %s\n", gr)
	}
	if d.Definition != nil && d.Sandbox != "remote" {
		fmt.Fprintf(w, "environment: the sandbox's default set, plus %s (names; none of Pi's other keys)\n", Names(d.Environment))
	}
	fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", ops.IndentJSON(d.Definition))
	p.flags(d)
	Tools(w, d.Tools, d.Name)
}

// grantsText is what a person let the server reach beyond its profile,
// or "" when nothing.
func grantsText(v ops.View) string {
	gr := v.Grants
	if len(gr.Read)+len(gr.Write)+len(gr.Net) == 0 {
		return ""
	}
	return fmt.Sprintf("read %s; write %s; network %s", Names(gr.Read), Names(gr.Write), Names(gr.Net))
}

// flags lists what a person should look at before approving.
func (p *Printer) flags(d ops.Detail) {
	for _, f := range d.Flags {
		where := ""
		if f.File != "" {
			where = p.disp(d.Cwd, f.File)
			if f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
			where = " (" + where + ")"
		}
		fmt.Fprintf(p.Out, "warning: %s: %s%s\n", f.Key, f.Text, where)
	}
}

// Approval shows what consent covers: the merged definition, the part the
// repository owns, and the files pinned with it; then, for a server
// approved before whose repository part changed since, what changed.
func (p *Printer) Approval(d ops.Detail, c ops.Change, changed bool) {
	w := p.Out
	fmt.Fprintf(w, "%s (%s), %s\n", d.Name, d.State, d.Row.RepositoryReason)
	if merged, owned := ops.IndentJSON(d.Definition), ops.IndentJSON(d.Owned); merged == owned {
		// Everything comes from the repository: one listing, not two.
		fmt.Fprintf(w, "definition (merged: what will run; all of it from the repository, pinned by %s):\n%s\n", d.Digest, merged)
	} else {
		fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", merged)
		fmt.Fprintf(w, "owned by the repository (pinned by %s):\n%s\n", d.Digest, owned)
	}
	if pinned := d.PinnedFiles; len(pinned) > 0 {
		for _, t := range d.PinnedTrees {
			fmt.Fprintf(w, "pinned: every file under %s (%d files, node_modules included), since code the definition runs there may load any of them; any change there asks again\n", t.Tree, t.Files)
		}
		fmt.Fprintf(w, "pinned files: (any change asks again)\n")
		for i, f := range pinned {
			if i == 20 && len(pinned) > 21 {
				fmt.Fprintf(w, "  … and %d more\n", len(pinned)-20)
				break
			}
			state := f.Digest
			if f.Digest == "" {
				state = "missing"
			}
			fmt.Fprintf(w, "  %s %s\n", f.Path, state)
		}
	}
	p.flags(d)
	PreviewTools(w, d.Tools, d.Name)
	fmt.Fprintf(w, "sandbox: %s\n", d.Sandbox)
	if gr := grantsText(d.View); gr != "" {
		fmt.Fprintf(w, "grants: %s\n", gr)
	}
	fmt.Fprintf(w, "approval digest: %s\n", d.ApprovalDigest)
	if !changed {
		return
	}
	// A line diff of the part the person approved (kept in the store
	// beside its digest) against the part there now.
	if c.Was == nil {
		fmt.Fprintf(w, "changed since you approved it (%s); the store kept only its digest then, so the whole definition is above\n", OrDash(c.DecidedAt))
		return
	}
	fmt.Fprintf(w, "changed since you approved it (%s), in the repository's part (- approved, + now):\n", OrDash(c.DecidedAt))
	for _, l := range c.Diff {
		fmt.Fprintln(w, l)
	}
}

// Decision says what approve or reject recorded.
func (p *Printer) Decision(dec ops.Decision) {
	fmt.Fprintf(p.Out, "%s %s for %s\n", dec.Decision, dec.Server, dec.Project)
	fmt.Fprintf(p.Out, "recorded in %s\n", dec.Store)
}

// Reset says which decisions reset forgot.
func (p *Printer) Reset(r ops.Reset) {
	w := p.Out
	found, project, name := len(r.Dropped) > 0, r.Project, r.Server
	switch {
	case r.Stale:
		for _, dir := range r.Dropped {
			fmt.Fprintf(w, "dropped decisions for %s (gone)\n", dir)
		}
		if !found {
			fmt.Fprintln(w, "no stale projects")
		}
	case !found && name != "":
		fmt.Fprintf(w, "no decision recorded for %s in %s\n", name, project)
	case !found:
		fmt.Fprintf(w, "no decisions recorded for %s\n", project)
	case name != "":
		fmt.Fprintf(w, "forgot the decision for %s in %s\n", name, project)
	default:
		fmt.Fprintf(w, "forgot every decision for %s\n", project)
	}
	fmt.Fprintf(w, "store: %s\n", r.Store)
}
