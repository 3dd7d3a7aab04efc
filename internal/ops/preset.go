package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/preset"
)

// PresetServer is one server of a preset: what an apply did with it, or
// for a listing what it needs.
type PresetServer struct {
	ID     string `json:"id"`
	Action string `json:"action,omitempty"` // added, restored, kept, unchanged, skipped
	Needs  []Need `json:"needs,omitempty"`
	// Missing is, for a skipped server, the runtime this machine lacks.
	Missing string `json:"missing,omitempty"`
}

// PresetOptions are the inputs of a preset apply: `mcp --preset` and
// setup's seeding.
type PresetOptions struct {
	Name, Scope string
	Project     string // absolute
	Replace     bool   // restore the preset's servers to their pinned baselines
	DryRun      bool
	// Missing, when set, names what a server needs that this machine lacks
	// ("" when nothing): such a server is skipped, with it (setup's
	// seeding adds only servers that can run).
	Missing func([]preset.Need) string
}

// Applied is what a preset apply wrote.
type Applied struct {
	Preset  string
	Scope   string
	File    string
	Servers []PresetServer
	// Settings are the settings written (where the file left them unset).
	Settings []string
	// Result is the file edit; Written the servers it wrote and Pre the
	// approvals ApproveFirst recorded before it, for FinishWrite.
	Result  mcpedit.Result
	Written []string
	Pre     map[string]string
	Needs   []Need
}

// Preset is one preset as a listing shows it: its servers, each with what
// it needs, and the settings it writes where they are unset.
type Preset struct {
	Name     string         `json:"name"`
	Purpose  string         `json:"purpose"`
	Servers  []PresetServer `json:"servers"`
	Settings map[string]any `json:"settings"`
}

// PresetNames are the presets' names, in their order.
func PresetNames() []string { return preset.Names() }

// CheckPreset refuses a name that names no preset, listing those there are.
func CheckPreset(name string) error {
	if _, ok := preset.Get(name); !ok {
		return &Error{Kind: Usage, Err: fmt.Errorf("no preset named %q", name), Hints: texts("presets: " + strings.Join(preset.Names(), ", "))}
	}
	return nil
}

// Presets are every preset, in their order.
func Presets() []Preset {
	var all []Preset
	for _, name := range preset.Names() {
		p, _ := preset.Get(name)
		pj := Preset{Name: p.Name, Purpose: p.Purpose, Servers: []PresetServer{}, Settings: p.Settings}
		for _, id := range p.Servers {
			pj.Servers = append(pj.Servers, PresetServer{ID: id, Needs: BaselineNeeds(id)})
		}
		all = append(all, pj)
	}
	return all
}

// BaselineNeeds is what a preset server's pinned baseline needs.
func BaselineNeeds(id string) []Need {
	b, _ := preset.Baseline(id)
	out := []Need{}
	for _, n := range b.Needs {
		out = append(out, Need{Server: id, Kind: n.Kind, Name: n.Name, Optional: n.Optional, Text: n.Text})
	}
	return out
}

// ApplyPreset writes a preset's servers into one file: a server the file
// lacks is added; one already there is kept unless Replace restores the
// baseline; no other server is touched. Settings are written only where
// the file leaves them unset. A repository scope approves what it wrote
// before writing it (ApproveFirst); the caller finishes with FinishWrite.
func (o *Ops) ApplyPreset(opt PresetOptions) (Applied, error) {
	if err := CheckPreset(opt.Name); err != nil {
		return Applied{}, err
	}
	p, _ := preset.Get(opt.Name)
	sf, err := o.ScopeFile(opt.Scope, opt.Project)
	if err != nil {
		return Applied{}, err
	}
	g, err := o.Gate(opt.Project)
	if err != nil {
		return Applied{}, err
	}
	out := Applied{Preset: p.Name, Scope: sf.Scope, File: sf.Path, Pre: map[string]string{}}
	eo := mcpedit.Options{DryRun: opt.DryRun}
	if sf.Repository {
		eo.Prepare = o.ApproveFirst(opt.Project, sf.Path, func() []string { return out.Written }, out.Pre)
	}
	res, err := o.EditFile(g, sf.Path, sf.Repository, eo, func(d *mcpedit.Doc) error {
		out.Servers, out.Written, out.Settings = nil, nil, nil
		for _, id := range p.Servers {
			b, ok := preset.Baseline(id)
			if !ok {
				return fmt.Errorf("preset %s: no baseline for %s", p.Name, id)
			}
			st := PresetServer{ID: id}
			cur, has := d.Entry(id)
			missing := ""
			if !has && opt.Missing != nil {
				missing = opt.Missing(b.Needs)
			}
			switch {
			case missing != "":
				st.Action, st.Missing = "skipped", missing
			case !has:
				st.Action = "added"
			case reflect.DeepEqual(cur, b.Entry):
				st.Action = "unchanged"
			case !opt.Replace:
				st.Action = "kept"
			default:
				st.Action = "restored"
			}
			if st.Action == "added" || st.Action == "restored" {
				if err := d.SetServer(id, b.JSON); err != nil {
					return err
				}
				out.Written = append(out.Written, id)
			}
			out.Servers = append(out.Servers, st)
		}
		for _, k := range slices.Sorted(maps.Keys(p.Settings)) {
			v, _ := json.Marshal(p.Settings[k])
			wrote, err := d.SetSettingDefault(k, v)
			if err != nil {
				return err
			}
			if wrote {
				out.Settings = append(out.Settings, k)
			}
		}
		return nil
	})
	if err != nil {
		var oe *Error
		if !errors.As(err, &oe) {
			err = refused(err)
		}
		return Applied{}, err
	}
	out.Result, out.File = res, res.Path
	for _, s := range out.Servers {
		if s.Action != "skipped" {
			out.Needs = append(out.Needs, BaselineNeeds(s.ID)...)
		}
	}
	return out, nil
}
