package ops

// WriteResult is the answer of a write verb (add, remove, enable, disable,
// a preset apply): what was written where, what it approved, what the
// person should know and what the servers still need. It is their --json,
// and setup's preset.
type WriteResult struct {
	Action          string         `json:"action"`
	Name            string         `json:"name,omitempty"`
	Preset          string         `json:"preset,omitempty"`
	Scope           string         `json:"scope"`
	File            string         `json:"file"`
	Changed         bool           `json:"changed"`
	DryRun          bool           `json:"dryRun"`
	Approved        []string       `json:"approved"`
	DecisionDropped bool           `json:"decisionDropped"`
	FileRemoved     bool           `json:"fileRemoved,omitempty"` // enable left the file empty and removed it
	Servers         []PresetServer `json:"servers,omitempty"`
	Needs           []Need         `json:"needs"`
	Notes           []string       `json:"notes"`
	Content         string         `json:"content,omitempty"` // --dry-run: the file as it would read
	Command         string         `json:"command,omitempty"` // --print-command
}

// NewWriteResult is action's answer before the write: its lists empty,
// not null.
func NewWriteResult(action string) WriteResult {
	return WriteResult{Action: action, Approved: []string{}, Needs: []Need{}, Notes: []string{}}
}

// PresetResult is the answer of a preset apply, before FinishWrite.
func PresetResult(ap Applied, dryRun bool) WriteResult {
	out := NewWriteResult("preset")
	out.Preset, out.Scope, out.File, out.DryRun, out.Changed = ap.Preset, ap.Scope, ap.File, dryRun, ap.Result.Changed
	out.Servers, out.Needs = ap.Servers, append(out.Needs, ap.Needs...)
	return out
}

// Finished adds what FinishWrite did to the answer: the approvals, the
// notes (worded for prog, the command the person typed) and the needs.
func (out *WriteResult) Finished(w Written, prog string) {
	out.Approved = append(out.Approved, w.Approved...)
	for _, n := range w.Notes {
		out.Notes = append(out.Notes, n.Render(prog))
	}
	out.Needs = append(out.Needs, w.Needs...)
}

// SeedPreset is setup's seeding: the preset applied to the global scope
// the way `piagent mcp --preset NAME --scope global --replace` does, with
// only the servers this machine can run (the others skipped, with what
// they need), then finished as that command finishes it. project is the
// working directory; the notes are worded for prog.
func (o *Ops) SeedPreset(name, project string, dryRun bool, prog string) (Seeded, error) {
	ap, err := o.ApplyPreset(PresetOptions{Name: name, Scope: DefaultScope, Project: project, Replace: true, DryRun: dryRun, Missing: o.MissingRuntime})
	if err != nil {
		return Seeded{}, err
	}
	out := PresetResult(ap, dryRun)
	if dryRun {
		out.Content = string(ap.Result.After)
		return Seeded{Answer: &out, Changed: out.Changed, Needs: out.Needs}, nil
	}
	w, err := o.FinishWrite(project, ap.Result, ap.Written, ap.Pre, false)
	out.Finished(w, prog)
	return Seeded{Answer: &out, Changed: out.Changed, Needs: out.Needs}, err
}
