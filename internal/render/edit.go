package render

import (
	"bytes"
	"fmt"

	"github.com/piagent/piagent/internal/ops"
)

// Edit says what remove, enable or disable did (out is its answer), for a
// person; project is the folder it was run for.
func (p *Printer) Edit(out *ops.WriteResult, e ops.Edited, project string) {
	switch {
	case e.NoChange != "":
		fmt.Fprintf(p.Out, "%s; no change\n", e.NoChange)
	case e.Record:
		p.record(out, e, project)
	default:
		p.edit(out, e, project)
	}
}

// record says what a switch in piagent's own record did.
func (p *Printer) record(out *ops.WriteResult, e ops.Edited, project string) {
	s, verb := e.Server, e.Verb
	w := p.Out
	if e.DryRun {
		fmt.Fprintf(w, "would %s %s for this project in piagent's own record (%s)\n", verb, s.Name, ops.Display(p.Home, project, out.File))
		fmt.Fprintln(w, "dry run: nothing written")
		return
	}
	fmt.Fprintf(w, "%s %s for this project (piagent's own record; no file in the repository changed)\n", ops.EditPast[verb], s.Name)
	if verb == "disable" {
		p.kept(s.Name, s.State)
	}
	p.Notes(out.Notes)
}

// edit says what an edit of a file did.
func (p *Printer) edit(out *ops.WriteResult, e ops.Edited, project string) {
	verb, s := out.Action, e.Server
	w := p.Out
	fmt.Fprintf(w, "%s %s (scope %s)\n", ops.EditPast[verb], s.Name, out.Scope)
	fmt.Fprintf(w, "file: %s\n", out.File)
	if out.FileRemoved {
		fmt.Fprintf(w, "removed %s: nothing was left in it\n", ops.Display(p.Home, project, out.File))
	}
	if out.DecisionDropped {
		fmt.Fprintf(w, "dropped the decision for %s in %s\n", s.Name, e.Project)
	}
	if verb == "disable" && s.Repository {
		p.kept(s.Name, s.State)
	}
	if (verb == "disable" || verb == "enable") && s.Repository && e.InProject && !out.FileRemoved {
		fmt.Fprintf(w, "note: %s is in the repository: the switch may be committed with it\n", ops.Display(p.Home, project, out.File))
	}
	p.Notes(out.Notes)
}

// kept says which decision a disabled repository server keeps. Only
// a decision that exists is kept (issue 23: "its approval is kept" of a
// server never approved misled).
func (p *Printer) kept(name, state string) {
	w := p.Out
	switch state {
	case ops.PendingApproval, ops.Disabled:
		fmt.Fprintf(w, "it was never approved here; '%s enable %s' switches it back on, still waiting for approval\n", p.Cmd, name)
	case ops.Rejected:
		fmt.Fprintf(w, "its rejection is kept: '%s enable %s' switches it back on, still rejected\n", p.Cmd, name)
	default:
		fmt.Fprintf(w, "its approval is kept: '%s enable %s' switches it back on\n", p.Cmd, name)
	}
}

// Notes prints notes about other layers and files, on stderr.
func (p *Printer) Notes(notes []string) {
	for _, n := range notes {
		fmt.Fprintf(p.Err, "note: %s\n", n)
	}
}

// DryWrite says what a write (add, a preset apply, an edit) would do:
// the file as it would read.
func (p *Printer) DryWrite(out *ops.WriteResult, res ops.EditResult) {
	w := p.Out
	if out.Preset == "" {
		fmt.Fprintf(w, "would %s %s (scope %s)\n", out.Action, out.Name, out.Scope)
	}
	if res.Changed {
		fmt.Fprintf(w, "would write %s:\n%s", out.File, res.After)
		if !bytes.HasSuffix(res.After, []byte("\n")) {
			fmt.Fprintln(w)
		}
	} else {
		fmt.Fprintf(w, "no change to %s\n", out.File)
	}
	fmt.Fprintln(w, "dry run: nothing written")
}

// Wrote says what a write did: the scope and file, the approval a
// repository scope records for what the person just wrote, notes about
// higher layers, and what the servers still need (stderr).
func (p *Printer) Wrote(out *ops.WriteResult, changed bool) {
	w := p.Out
	if out.Preset == "" {
		if changed {
			verb := map[string]string{"add": "added", "replace": "replaced"}[out.Action]
			fmt.Fprintf(w, "%s %s (scope %s)\n", verb, out.Name, out.Scope)
		} else {
			fmt.Fprintf(w, "%s is already defined so (scope %s); no change\n", out.Name, out.Scope)
		}
	}
	fmt.Fprintf(w, "file: %s\n", out.File)
	for _, name := range out.Approved {
		fmt.Fprintf(w, "approved %s for this project; a teammate who clones still has to approve it\n", name)
	}
	p.Notes(out.Notes)
	Needs(p.Err, out.Needs)
}
