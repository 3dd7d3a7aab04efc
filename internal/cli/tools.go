package cli

import (
	"encoding/json"
	"fmt"
	"github.com/piagent/piagent/internal/ops"
	"io"
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

// toolsView is a server's catalogue against its pin, for get, doctor and
// approve --tools.
type toolsView struct {
	Known     bool           `json:"known"`  // the adapter's cache has the server's catalogue
	Pinned    bool           `json:"pinned"` // a pin exists for this approval
	Diff      catalogue.Diff `json:"diff"`
	Concealed []string       `json:"concealed"`
	// Unseen: the person's policy asks to look first ("firstSight":
	// "ask") and no person has accepted this catalogue yet.
	Unseen bool   `json:"unseen,omitempty"`
	Err    string `json:"error,omitempty"`
	seen   catalogue.Catalogue
	key    string
	tools  map[string]map[string]any // the seen tools as the cache holds them
	// instructions are the server's instructions as the cache holds them.
	instructions string
}

// catalogueFiles are the adapter's cache and the pins, read once per
// command (doctor asks for every server).
type catalogueFiles struct {
	mc      *mcpcache.Cache
	mcErr   error
	pins    map[string]catalogue.Pin
	pinsErr error
}

func (a *app) catalogueFiles(g *gate.Gate) *catalogueFiles {
	if a.cat == nil {
		f := &catalogueFiles{}
		f.mc, f.mcErr = mcpcache.Load(registry.AdapterCache(g.View.AgentDir))
		f.pins, f.pinsErr = catalogue.Load(registry.CataloguePins(a.env.Home))
		a.cat = f
	}
	return a.cat
}

// waiting reports whether the catalogue waits for a person: it differs
// from its pin, or it hides content no person accepted (a first-sight pin
// is taken of it too, issue 39 item 2; content a person accepted is part
// of their pin).
func (v toolsView) waiting() bool {
	return v.Known && v.Err == "" && (v.Pinned && !v.Diff.Empty() || len(v.Concealed) > 0 || v.Unseen)
}

func (a *app) toolsOf(g *gate.Gate, s *gate.Server) toolsView {
	v := toolsView{Concealed: []string{}}
	files := a.catalogueFiles(g)
	mc, err := files.mc, files.mcErr
	if err != nil {
		v.Err = err.Error()
		return v
	}
	e, ok := mc.Servers[s.Name]
	defs := []map[string]any{s.Config.Entry}
	if l, found := launch.Launched(a.env.Home, g.Project, s.Name); found {
		defs = append(defs, l)
	}
	if !ok || !catalogue.Belongs(e, defs, a.env.LookupEnv, g.View.Home) {
		return v
	}
	seen, err := catalogue.FromEntry(e.Raw)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	v.Known, v.seen, v.key = true, seen, catalogue.KeyOf(g, s)
	var raw struct {
		Tools        []map[string]any `json:"tools"`
		Instructions string           `json:"instructions"`
	}
	_ = json.Unmarshal(e.Raw, &raw)
	v.instructions = raw.Instructions
	v.tools = map[string]map[string]any{}
	for _, t := range raw.Tools {
		if n, ok := t["name"].(string); ok {
			v.tools[n] = t
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
	if pol, err := policy.LoadSettings(a.env.Home, g.Project); err != nil || pol.FirstSight() == policy.FirstSightAsk {
		v.Unseen = !ok || pin.By != "person"
	}
	return v
}

// printTools shows what changed, each changed or new tool's description
// with hidden characters made visible.
func (v toolsView) print(w io.Writer, name string) {
	switch {
	case v.Err != "":
		fmt.Fprintf(w, "tools: cannot be compared: %s\n", v.Err)
		return
	case !v.Known:
		fmt.Fprintf(w, "tools: not known yet (the adapter has not listed %s's tools); they are pinned the first time piagent sees them\n", name)
		return
	case !v.Pinned && len(v.Concealed) == 0:
		fmt.Fprintf(w, "tools: %d, not pinned yet (pinned at the next tool call)\n", len(v.seen.Tools))
		return
	case v.Pinned && v.Diff.Empty() && len(v.Concealed) == 0 && !v.Unseen:
		fmt.Fprintf(w, "tools: %d, as pinned\n", len(v.seen.Tools))
		return
	case v.Diff.Empty() && len(v.Concealed) == 0:
		fmt.Fprintf(w, "tools: %d, seen for the first time; your policy asks you to look before the model may use them (firstSight: ask)\n", len(v.seen.Tools))
		for _, n := range v.seen.Names() {
			desc, _ := v.tools[n]["description"].(string)
			fmt.Fprintf(w, "  tool %s: %s\n", catalogue.Visible(n), catalogue.Visible(desc))
		}
		return
	case v.Pinned && v.Diff.Empty():
		fmt.Fprintf(w, "tools: %d, pinned at first sight; what they hide waits for a person\n", len(v.seen.Tools))
	case v.Pinned:
		fmt.Fprintf(w, "tools: changed since pinned: %s\n", v.Diff.String())
	}
	for _, c := range v.Concealed {
		fmt.Fprintf(w, "concealed: %s\n", c)
	}
	show := append(append([]string{}, v.Diff.Changed...), v.Diff.New...)
	for _, f := range v.seen.Concealed {
		if n, ok := strings.CutPrefix(f.Item, "tool "); ok && v.Pinned && !slices.Contains(show, n) {
			show = append(show, n)
		}
	}
	if !v.Pinned {
		show = v.seen.Names()
	}
	if v.Diff.Instructions || !v.Pinned && v.instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", catalogue.Visible(v.instructions))
	}
	sort.Strings(show)
	for _, n := range show {
		desc, _ := v.tools[n]["description"].(string)
		fmt.Fprintf(w, "  tool %s: %s\n", catalogue.Visible(n), catalogue.Visible(desc))
		if schema, ok := v.tools[n]["inputSchema"]; ok {
			b, _ := json.Marshal(schema)
			fmt.Fprintf(w, "    input: %s\n", catalogue.Visible(string(b)))
		}
	}
}

// preview shows, in an approval's preview, what the server offers the
// model as far as it is known, so that consent covers it at first sight too
// (issue 39, item 4): every tool with its description, hidden characters
// made visible; or that it is not known yet.
func (v toolsView) preview(w io.Writer, name string) {
	switch {
	case v.Err != "":
		fmt.Fprintf(w, "tools: cannot be read: %s\n", v.Err)
		return
	case !v.Known:
		fmt.Fprintf(w, "tools: not known yet: pinned at first connection, shown in the notice\n")
		return
	}
	state := "not pinned yet: pinned as listed here when the session next reads them"
	switch {
	case v.Pinned && !v.Diff.Empty():
		state = "changed since pinned: " + v.Diff.String()
	case v.Pinned:
		state = "as pinned"
	}
	fmt.Fprintf(w, "tools (%d, %s):\n", len(v.seen.Tools), state)
	for _, n := range v.seen.Names() {
		desc, _ := v.tools[n]["description"].(string)
		fmt.Fprintf(w, "  tool %s: %s\n", catalogue.Visible(n), catalogue.Visible(desc))
	}
	for _, c := range v.Concealed {
		fmt.Fprintf(w, "concealed: %s\n", c)
	}
	if v.instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", catalogue.Visible(v.instructions))
	}
}

// reportedChange is the last changed catalogue Pi's built-in client
// reported for a server (the helper records it), against its pin.
func (a *app) reportedChange(g *gate.Gate, s *gate.Server) (catalogue.Pin, catalogue.Diff, bool) {
	files := a.catalogueFiles(g)
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

// approveTools records what a server offers now as its catalogue pin, after
// showing how it differs from the last one: the adapter's cache, and what
// Pi's built-in client last reported.
// With dryRun it records nothing; with asJSON the answer is previewJSON,
// the words it shows inside it.
func (a *app) approveTools(g *gate.Gate, name string, yes, dryRun, asJSON bool) error {
	s, err := ops.Server(g, name)
	if err != nil {
		return err
	}
	var text strings.Builder
	w := a.env.Stdout
	if asJSON {
		w = &text
	}
	v := a.toolsOf(g, s)
	v.print(w, s.Name)
	rep, repDiff, repChanged := a.reportedChange(g, s)
	if repChanged {
		fmt.Fprintf(w, "tools as Pi's built-in client listed them: changed since pinned: %s\n", repDiff.String())
	}
	cacheChanged := v.waiting()
	answer := func(accepted bool) error {
		if !asJSON {
			return nil
		}
		return a.writeJSON(previewJSON{Action: "approve-tools", Server: s.Name, Project: g.Project, State: s.State,
			DryRun: dryRun, Waiting: cacheChanged || repChanged, Accepted: accepted, Preview: text.String()})
	}
	switch {
	case v.Err != "" && !repChanged:
		return refused(fmt.Errorf("the tools of %s cannot be accepted: %s", s.Name, v.Err))
	case !v.Known && !repChanged:
		return refused(fmt.Errorf("nothing to accept: the tools of %s are not known yet", s.Name),
			"start Pi with 'piagent pi' so that the adapter lists them, then run this again")
	case !cacheChanged && !repChanged:
		fmt.Fprintf(w, "%s's tools are as pinned; no change\n", s.Name)
		return answer(false)
	case dryRun:
		return answer(false)
	}
	if !a.env.Interactive && !yes {
		return refused(fmt.Errorf("not accepted: no terminal to ask for confirmation on"),
			"read the tools above, then run '"+a.mcpCmd()+" approve "+s.Name+" --tools --yes'")
	}
	if !yes {
		ok, err := a.confirm(fmt.Sprintf("Accept the tools of %s as shown? [y/N] ", s.Name))
		if err != nil {
			return err
		}
		if !ok {
			return cancelled(fmt.Errorf("not accepted: the changed tools of %s stay blocked", s.Name))
		}
	}
	pins := registry.CataloguePins(a.env.Home)
	if cacheChanged || v.Known && !v.Pinned {
		if err := catalogue.Record(pins, v.key, v.seen, false, a.env.now()); err != nil {
			return refused(fmt.Errorf("cannot record the tools of %s: %w", s.Name, err))
		}
	}
	if repChanged {
		if err := catalogue.Record(pins, catalogue.ReportedKey(g, s), rep.Catalogue, false, a.env.now()); err != nil {
			return refused(fmt.Errorf("cannot record the tools of %s: %w", s.Name, err))
		}
	}
	a.op().RefreshLaunch(g.Project)
	fmt.Fprintf(w, "accepted the tools of %s as they are now\n", s.Name)
	return answer(true)
}
