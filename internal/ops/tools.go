package ops

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
)

// Tools is a server's catalogue against its pin, for get, doctor and
// approve --tools.
type Tools struct {
	Known     bool           `json:"known"`  // the adapter's cache has the server's catalogue
	Pinned    bool           `json:"pinned"` // a pin exists for this approval
	Diff      catalogue.Diff `json:"diff"`
	Concealed []string       `json:"concealed"`
	// Unseen: the person's policy asks to look first ("firstSight":
	// "ask") and no person has accepted this catalogue yet.
	Unseen bool   `json:"unseen,omitempty"`
	Err    string `json:"error,omitempty"`
	// Seen is the catalogue as the adapter's cache holds it, Defs its
	// tools' definitions by name and Instructions the server's, for a
	// person to read.
	Seen         catalogue.Catalogue       `json:"-"`
	Defs         map[string]map[string]any `json:"-"`
	Instructions string                    `json:"-"`
	key          string
}

// catalogueFiles are the adapter's cache and the pins, read once per Ops
// (doctor asks for every server).
type catalogueFiles struct {
	mc      *mcpcache.Cache
	mcErr   error
	pins    map[string]catalogue.Pin
	pinsErr error
}

func (o *Ops) catalogueFiles(g *gate.Gate) *catalogueFiles {
	if o.cat == nil {
		f := &catalogueFiles{}
		f.mc, f.mcErr = mcpcache.Load(registry.AdapterCache(g.View.AgentDir))
		f.pins, f.pinsErr = catalogue.Load(registry.CataloguePins(o.Home))
		o.cat = f
	}
	return o.cat
}

// Visible is a catalogue's text as a person is shown it: hidden
// characters made visible (catalogue.Visible).
func Visible(s string) string { return catalogue.Visible(s) }

// Description is the tool's description, as its definition holds it.
func (v Tools) Description(tool string) string {
	desc, _ := v.Defs[tool]["description"].(string)
	return desc
}

// Shown are the tools a person is shown, sorted: those changed or new
// since the pin and, pinned, those that hide content; every tool when no
// pin exists yet.
func (v Tools) Shown() []string {
	if !v.Pinned {
		show := v.Seen.Names()
		sort.Strings(show)
		return show
	}
	show := append(append([]string{}, v.Diff.Changed...), v.Diff.New...)
	for _, f := range v.Seen.Concealed {
		if n, ok := strings.CutPrefix(f.Item, "tool "); ok && !slices.Contains(show, n) {
			show = append(show, n)
		}
	}
	sort.Strings(show)
	return show
}

// Waiting reports whether the catalogue waits for a person: it differs
// from its pin, or it hides content no person accepted (a first-sight pin
// is taken of it too, issue 39 item 2; content a person accepted is part
// of their pin).
func (v Tools) Waiting() bool {
	return v.Known && v.Err == "" && (v.Pinned && !v.Diff.Empty() || len(v.Concealed) > 0 || v.Unseen)
}

// Tools is what s offers the model, as the adapter's cache holds it,
// against its pin.
func (o *Ops) Tools(g *gate.Gate, s *gate.Server) Tools {
	v := Tools{Concealed: []string{}}
	files := o.catalogueFiles(g)
	mc, err := files.mc, files.mcErr
	if err != nil {
		v.Err = err.Error()
		return v
	}
	e, ok := mc.Servers[s.Name]
	defs := []map[string]any{s.Config.Entry}
	if l, found := launch.Launched(o.Home, g.Project, s.Name); found {
		defs = append(defs, l)
	}
	lookup := func(k string) (string, bool) { v := o.getenv(k); return v, v != "" }
	if o.LookupEnv != nil {
		lookup = o.LookupEnv
	}
	if !ok || !catalogue.Belongs(e, defs, lookup, g.View.Home) {
		return v
	}
	seen, err := catalogue.FromEntry(e.Raw)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	v.Known, v.Seen, v.key = true, seen, catalogue.KeyOf(g, s)
	var raw struct {
		Tools        []map[string]any `json:"tools"`
		Instructions string           `json:"instructions"`
	}
	_ = json.Unmarshal(e.Raw, &raw)
	v.Instructions = raw.Instructions
	v.Defs = map[string]map[string]any{}
	for _, t := range raw.Tools {
		if n, ok := t["name"].(string); ok {
			v.Defs[n] = t
		}
	}
	for _, f := range seen.Concealed {
		v.Concealed = append(v.Concealed, f.String())
	}
	pins, err := files.pins, files.pinsErr
	if err != nil {
		v.Err = err.Error()
		return v
	}
	pin, ok := pins[v.key]
	if ok {
		v.Pinned = true
		v.Diff = catalogue.Compare(pin.Catalogue, seen)
		if pin.By == "person" {
			v.Concealed = []string{} // accepted with the pin
		}
	}
	if pol, err := policy.LoadSettings(o.Home, g.Project); err != nil || pol.FirstSight() == policy.FirstSightAsk {
		v.Unseen = !ok || pin.By != "person"
	}
	return v
}

// ToolsChange is what approve --tools would accept: the adapter's cache
// against the pin, and what Pi's built-in client last reported.
type ToolsChange struct {
	Server *gate.Server
	Tools  Tools
	// Reported: Pi's built-in client listed a catalogue that differs from
	// its pin (ReportedDiff).
	Reported     bool
	ReportedDiff catalogue.Diff
	reported     catalogue.Pin
}

// Waiting reports whether there is anything to accept.
func (c ToolsChange) Waiting() bool { return c.Tools.Waiting() || c.Reported }

// ToolsChangeOf is what approve --tools of name would accept; a catalogue
// that cannot be compared, or is not known, is refused (after the caller
// showed what there is: c is set either way).
func (o *Ops) ToolsChangeOf(g *gate.Gate, name string) (c ToolsChange, err error) {
	s, err := Server(g, name)
	if err != nil {
		return c, err
	}
	c = ToolsChange{Server: s, Tools: o.Tools(g, s)}
	c.reported, c.ReportedDiff, c.Reported = o.reportedChange(g, s)
	switch {
	case c.Tools.Err != "" && !c.Reported:
		return c, refused(fmt.Errorf("the tools of %s cannot be accepted: %s", s.Name, c.Tools.Err))
	case !c.Tools.Known && !c.Reported:
		return c, refused(fmt.Errorf("nothing to accept: the tools of %s are not known yet", s.Name),
			text("start Pi with 'piagent pi' so that the adapter lists them, then run this again"))
	}
	return c, nil
}

// AcceptTools records what the server offers now as its catalogue pin
// (the adapter's cache's, and what Pi's built-in client reported), and
// refreshes the launcher's file.
func (o *Ops) AcceptTools(g *gate.Gate, c ToolsChange) error {
	pins := registry.CataloguePins(o.Home)
	v := c.Tools
	if v.Waiting() || v.Known && !v.Pinned {
		if err := catalogue.Record(pins, v.key, v.Seen, false, o.now()); err != nil {
			return refused(fmt.Errorf("cannot record the tools of %s: %w", c.Server.Name, err))
		}
	}
	if c.Reported {
		if err := catalogue.Record(pins, catalogue.ReportedKey(g, c.Server), c.reported.Catalogue, false, o.now()); err != nil {
			return refused(fmt.Errorf("cannot record the tools of %s: %w", c.Server.Name, err))
		}
	}
	o.RefreshLaunch(g.Project)
	return nil
}

// reportedChange is the last changed catalogue Pi's built-in client
// reported for a server (the helper records it), against its pin.
func (o *Ops) reportedChange(g *gate.Gate, s *gate.Server) (catalogue.Pin, catalogue.Diff, bool) {
	files := o.catalogueFiles(g)
	if files.pinsErr != nil {
		return catalogue.Pin{}, catalogue.Diff{}, false
	}
	key := catalogue.ReportedKey(g, s)
	seen, ok := files.pins[key+catalogue.SeenSuffix]
	if !ok {
		return catalogue.Pin{}, catalogue.Diff{}, false
	}
	d := catalogue.Compare(files.pins[key].Catalogue, seen.Catalogue)
	return seen, d, !d.Empty()
}
