// Package catalogue pins what an approved MCP server offers the model: its
// tools (name, description, input and output schema, annotations, UI
// fields), resources, prompts and instructions. An approval pins what a
// server runs; a catalogue pin catches the server that, once approved,
// changes what it tells the model (a "rug pull": a description that now asks
// for ~/.ssh/id_rsa, a widened schema, a new tool, a flipped annotation).
//
// A catalogue is read from the adapter's metadata cache entry for the
// server (mcp-cache.json) or from the tools the extension reports from Pi;
// both become the same per-item digests, canonical JSON, so the order of
// keys never matters. Pins are keyed by the approval they belong to
// (project, server, definition digest), never by a name alone: a renamed
// server or tool is new, not trusted.
//
// Concealed content (Unicode tag characters, zero-width and bidi controls,
// variation-selector runs, terminal escapes, very long descriptions) is
// flagged at first sight, before any pin is taken.
package catalogue

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/piagent/piagent/internal/digest"
)

// Catalogue is a server's offer as digests, one per item.
type Catalogue struct {
	Tools        map[string]string `json:"tools"`
	Resources    map[string]string `json:"resources,omitempty"`
	Prompts      map[string]string `json:"prompts,omitempty"`
	Instructions string            `json:"instructions,omitempty"` // digest; "" when none
	// Concealed lists what a person could not see, per item ("tool x:
	// Unicode tag characters"). Not part of the pin.
	Concealed []Finding `json:"-"`
	// Descriptions are the tools' descriptions as seen, for showing a
	// first sight to the person. Not part of the pin.
	Descriptions map[string]string `json:"-"`
}

// Finding is one item with concealed content.
type Finding struct {
	Item  string // "tool NAME", "resource NAME", "prompt NAME", "instructions"
	Class string // what was found
}

func (f Finding) String() string { return f.Item + ": " + f.Class }

// toolFields are the parts of a tool a pin covers: everything the model is
// shown or that shapes a call. Other keys (volatile metadata) are left out.
var toolFields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "uiResourceUri", "uiVisibility", "uiStreamMode"}

// FromEntry reads one server's entry of the adapter's metadata cache (or
// an entry of the same shape built from the extension's report).
func FromEntry(raw json.RawMessage) (Catalogue, error) {
	var e struct {
		Tools        []map[string]any `json:"tools"`
		Resources    []map[string]any `json:"resources"`
		Prompts      []map[string]any `json:"prompts"`
		Instructions *string          `json:"instructions"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Catalogue{}, fmt.Errorf("catalogue entry: %w", err)
	}
	c := Catalogue{Tools: map[string]string{}, Resources: map[string]string{}, Prompts: map[string]string{}, Descriptions: map[string]string{}}
	for _, t := range e.Tools {
		name, ok := t["name"].(string)
		if !ok {
			continue
		}
		part := map[string]any{}
		for _, k := range toolFields {
			if v, ok := t[k]; ok {
				part[k] = v
			}
		}
		c.Tools[name] = must(part)
		c.Descriptions[name], _ = t["description"].(string)
		c.scan("tool "+name, t)
	}
	for _, r := range e.Resources {
		name, _ := r["name"].(string)
		uri, _ := r["uri"].(string)
		key := name + " " + uri
		c.Resources[key] = must(r)
		c.scan("resource "+name, r)
	}
	for _, p := range e.Prompts {
		name, ok := p["name"].(string)
		if !ok {
			continue
		}
		c.Prompts[name] = must(p)
		c.scan("prompt "+name, p)
	}
	if e.Instructions != nil && *e.Instructions != "" {
		c.Instructions = digest.Bytes([]byte(*e.Instructions))
		c.scanText("instructions", *e.Instructions)
	}
	return c, nil
}

// must digests a decoded JSON value; canonical JSON of decoded JSON cannot
// fail, and if it ever did the item would match no pin, which blocks it.
func must(v any) string {
	d, err := digest.Of(v)
	if err != nil {
		return "sha256:unavailable"
	}
	return d
}

// scan checks every string in an item (descriptions, schema texts, enum
// values) for concealed content.
func (c *Catalogue) scan(item string, v any) {
	switch x := v.(type) {
	case string:
		c.scanText(item, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.scanText(item, k)
			c.scan(item, x[k])
		}
	case []any:
		for _, e := range x {
			c.scan(item, e)
		}
	}
}

func (c *Catalogue) scanText(item, s string) {
	for _, class := range Concealed(s) {
		if f := (Finding{Item: item, Class: class}); !slices.Contains(c.Concealed, f) {
			c.Concealed = append(c.Concealed, f)
		}
	}
}

// Diff is how a catalogue differs from its pin, by item name, sorted.
type Diff struct {
	Changed      []string `json:"changed"` // tools whose description, schema or annotations differ
	New          []string `json:"new"`     // tools the pin does not have
	Removed      []string `json:"removed"`
	Resources    []string `json:"resources,omitempty"` // resources and prompts added, changed or removed
	Prompts      []string `json:"prompts,omitempty"`
	Instructions bool     `json:"instructions,omitempty"`
}

// Empty reports no difference.
func (d Diff) Empty() bool {
	return len(d.Changed) == 0 && len(d.New) == 0 && len(d.Removed) == 0 && len(d.Resources) == 0 && len(d.Prompts) == 0 && !d.Instructions
}

// Compare returns how seen differs from pin.
func Compare(pin, seen Catalogue) Diff {
	var d Diff
	for name, dg := range seen.Tools {
		old, ok := pin.Tools[name]
		switch {
		case !ok:
			d.New = append(d.New, name)
		case old != dg:
			d.Changed = append(d.Changed, name)
		}
	}
	for name := range pin.Tools {
		if _, ok := seen.Tools[name]; !ok {
			d.Removed = append(d.Removed, name)
		}
	}
	d.Resources = mapDiff(pin.Resources, seen.Resources)
	d.Prompts = mapDiff(pin.Prompts, seen.Prompts)
	d.Instructions = pin.Instructions != seen.Instructions
	sort.Strings(d.Changed)
	sort.Strings(d.New)
	sort.Strings(d.Removed)
	return d
}

func mapDiff(a, b map[string]string) []string {
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// String is the diff in one line for people.
func (d Diff) String() string {
	var parts []string
	add := func(what string, names []string) {
		if len(names) > 0 {
			parts = append(parts, what+" "+strings.Join(names, ", "))
		}
	}
	add("changed:", d.Changed)
	add("new:", d.New)
	add("removed:", d.Removed)
	add("resources changed:", d.Resources)
	add("prompts changed:", d.Prompts)
	if d.Instructions {
		parts = append(parts, "the server's instructions changed")
	}
	return strings.Join(parts, "; ")
}

// State is one server's catalogue seen against its pin, for the guard.
type State struct {
	Seen      Catalogue
	Diff      Diff
	Concealed []Finding // flagged content no person has accepted yet
	Err       string    // the pins cannot be read: every call to the server is blocked
	// FirstSight: the catalogue was pinned now, at its first sight; the
	// person is shown what was pinned (issue 39, item 4).
	FirstSight bool
	// Unpinned: no pin, and none was recorded (States with record false):
	// a call would pin this first sight, and show it.
	Unpinned bool
	// Unseen: the person's policy asks to look at a catalogue before the
	// model may ("firstSight": "ask"), and no person has accepted this one.
	Unseen bool
}

// Stops says whether a call of tool (its name as the server gave it; ""
// when it cannot be told) is stopped, with the state and why.
func (st *State) Stops(tool string) (state, why string, stop bool) {
	if st.Err != "" {
		return "catalogue-unreadable", "its catalogue pins cannot be read (" + st.Err + ")", true
	}
	if st.Unseen {
		return "tools-unseen", "it was seen for the first time and your policy asks to look before the model may use it (firstSight: ask)", true
	}
	// A change since the pin is said first: it is what a person reviews.
	if tool != "" && slices.Contains(st.Diff.Changed, tool) {
		return "tools-changed", "tool " + tool + "'s description, schema or annotations changed since it was pinned", true
	}
	if tool != "" && slices.Contains(st.Diff.New, tool) {
		return "tools-changed", "tool " + tool + " is new since the server's tools were pinned", true
	}
	for _, f := range st.Concealed {
		if tool == "" || f.Item == "tool "+tool || !strings.HasPrefix(f.Item, "tool ") {
			return "tool-concealed", "it offers content a person cannot see: " + f.String(), true
		}
	}
	if tool == "" && len(st.Diff.Changed)+len(st.Diff.New) > 0 {
		return "tools-changed", "its tools changed since they were pinned (" + st.Diff.String() + ")", true
	}
	// A call that names no tool (the server's listing, its instructions, a
	// connection, a resource read) shows the model what the server says of
	// itself: stopped while that changed (issue 39, item 2).
	if tool == "" && (st.Diff.Instructions || len(st.Diff.Resources)+len(st.Diff.Prompts) > 0) {
		return "offer-changed", "what it tells the model besides its tools changed since pinned (" + st.Diff.String() + ")", true
	}
	return "", "", false
}

// Names are the seen tools' names, sorted.
func (c Catalogue) Names() []string {
	out := make([]string, 0, len(c.Tools))
	for n := range c.Tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
