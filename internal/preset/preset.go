// Package preset holds piagent's presets: named sets of MCP servers with
// pinned baseline definitions (exact package versions, an image pinned by
// digest, read-only and lockdown flags), embedded in the binary from
// presets.json. The definitions and the preset membership are the seed
// design's "Preset MCP" table and "Server baseline" section, verbatim.
//
// Each server also lists what it still needs on the machine before its first
// call (Docker running, a variable exported, Chrome installed, an OAuth
// sign-in, the Figma desktop app), and which variables are optional so they
// are not reported as missing.
//
// Every value returned is a fresh copy; changing it never changes the
// embedded data.
package preset

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/piagent/piagent/internal/jsonc"
)

//go:embed presets.json
var embedded []byte

// Kinds of Need.
const (
	NeedDocker       = "docker"        // the Docker daemon must be running
	NeedEnv          = "env"           // a variable must be exported (Name)
	NeedChrome       = "chrome"        // a Chrome or Chromium browser must be installed
	NeedOAuth        = "oauth"         // an OAuth sign-in (/mcp-auth Name) is needed once
	NeedFigmaDesktop = "figma-desktop" // the Figma desktop app with its Dev Mode MCP server
)

// Need is one thing a server needs before it works.
type Need struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`               // variable name, program or server the need refers to
	Optional bool   `json:"optional,omitempty"` // nice to have, not reported as missing
	Text     string `json:"text"`               // one line for people
}

// Server is one pinned baseline.
type Server struct {
	ID string
	// Entry is the definition as JSON decodes it (string, float64, bool,
	// []any, map[string]any), the shape mcpconfig.Entry has.
	Entry map[string]any
	// JSON is the same definition, compact, with the seed's key order.
	JSON  []byte
	Needs []Need
}

// Preset is one named preset.
type Preset struct {
	Name    string
	Purpose string
	Servers []string // server IDs, in the seed's order
	// Settings are the settings the preset seeds: only safe ones (the
	// platform's token strategy, directTools false with the mcp proxy).
	Settings map[string]any
}

type file struct {
	Version int                   `json:"version"`
	Servers map[string]fileServer `json:"servers"`
	Presets []filePreset          `json:"presets"`
}

type fileServer struct {
	Entry json.RawMessage `json:"entry"`
	Needs []Need          `json:"needs"`
}

type filePreset struct {
	Name     string          `json:"name"`
	Purpose  string          `json:"purpose"`
	Servers  []string        `json:"servers"`
	Settings json.RawMessage `json:"settings"`
}

var load = sync.OnceValue(func() *file {
	f, err := parse(embedded)
	if err != nil {
		panic("preset: embedded presets.json: " + err.Error())
	}
	return f
})

// parse decodes and checks a presets file strictly: it is ours.
func parse(data []byte) (*file, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the top-level value")
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("unsupported version %d", f.Version)
	}
	// encoding/json matches field names without regard to case; ours are
	// exact.
	if err := exactKeys(data); err != nil {
		return nil, err
	}
	for id, s := range f.Servers {
		var entry map[string]any
		if err := json.Unmarshal(s.Entry, &entry); err != nil || entry == nil {
			return nil, fmt.Errorf("server %q: entry is not an object", id)
		}
		for _, n := range s.Needs {
			switch n.Kind {
			case NeedDocker, NeedEnv, NeedChrome, NeedOAuth, NeedFigmaDesktop:
			default:
				return nil, fmt.Errorf("server %q: unknown need kind %q", id, n.Kind)
			}
			if n.Text == "" {
				return nil, fmt.Errorf("server %q: need %q has no text", id, n.Kind)
			}
		}
	}
	seen := map[string]bool{}
	for _, p := range f.Presets {
		if p.Name == "" || seen[p.Name] {
			return nil, fmt.Errorf("preset %q: empty or repeated name", p.Name)
		}
		seen[p.Name] = true
		for _, id := range p.Servers {
			if _, ok := f.Servers[id]; !ok {
				return nil, fmt.Errorf("preset %q: unknown server %q", p.Name, id)
			}
		}
		var settings map[string]any
		if err := json.Unmarshal(p.Settings, &settings); err != nil || settings == nil {
			return nil, fmt.Errorf("preset %q: settings is not an object", p.Name)
		}
	}
	return &f, nil
}

var (
	topKeys    = []string{"version", "servers", "presets"}
	serverKeys = []string{"entry", "needs"}
	needKeys   = []string{"kind", "name", "optional", "text"}
	presetKeys = []string{"name", "purpose", "servers", "settings"}
)

// exactKeys checks that every object above the definitions uses only the
// key spellings of the file format.
func exactKeys(data []byte) error {
	var top map[string]json.RawMessage
	if err := keys(data, &top, topKeys, "top level"); err != nil {
		return err
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(top["servers"], &servers); err != nil {
		return err
	}
	for id, raw := range servers {
		var s map[string]json.RawMessage
		if err := keys(raw, &s, serverKeys, "server "+id); err != nil {
			return err
		}
		var needs []json.RawMessage
		_ = json.Unmarshal(s["needs"], &needs)
		for _, n := range needs {
			if err := keys(n, new(map[string]json.RawMessage), needKeys, "server "+id+" need"); err != nil {
				return err
			}
		}
	}
	var presets []json.RawMessage
	_ = json.Unmarshal(top["presets"], &presets)
	for _, p := range presets {
		if err := keys(p, new(map[string]json.RawMessage), presetKeys, "preset"); err != nil {
			return err
		}
	}
	return nil
}

func keys(raw []byte, m *map[string]json.RawMessage, allowed []string, where string) error {
	if err := json.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	for k := range *m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: unknown key %q", where, k)
		}
	}
	return nil
}

// Names lists the presets in the seed's table order.
func Names() []string {
	f := load()
	out := make([]string, len(f.Presets))
	for i, p := range f.Presets {
		out[i] = p.Name
	}
	return out
}

// Get returns the preset called name.
func Get(name string) (Preset, bool) {
	for _, p := range load().Presets {
		if p.Name == name {
			var settings map[string]any
			_ = json.Unmarshal(p.Settings, &settings) // checked by parse
			return Preset{
				Name:     p.Name,
				Purpose:  p.Purpose,
				Servers:  slices.Clone(p.Servers),
				Settings: settings,
			}, true
		}
	}
	return Preset{}, false
}

// Baseline returns the pinned definition of the server id and what it needs.
func Baseline(id string) (Server, bool) {
	s, ok := load().Servers[id]
	if !ok {
		return Server{}, false
	}
	var entry map[string]any
	_ = json.Unmarshal(s.Entry, &entry) // checked by parse
	var compact bytes.Buffer
	_ = json.Compact(&compact, s.Entry)
	return Server{ID: id, Entry: entry, JSON: compact.Bytes(), Needs: slices.Clone(s.Needs)}, true
}

// OptionalVars lists the variables the server id references but does not
// need (Context7's API key only raises its quota); nil when there are none.
func OptionalVars(id string) []string {
	return slices.Clone(optionalVars()[id])
}

// optionalVars is OptionalVars for every server, read from the embedded
// file by jsonc's decoder rather than load()'s: the gate asks for each
// server it judges, and load() decodes and checks the whole catalogue by
// reflection, half a millisecond of a one-shot command on its own.
// TestOptionalVarsAgree holds the two readings together.
var optionalVars = sync.OnceValue(func() map[string][]string {
	v, _, err := jsonc.Parse(embedded)
	if err != nil {
		panic("preset: embedded presets.json: " + err.Error())
	}
	root, _ := v.(map[string]any)
	servers, _ := root["servers"].(map[string]any)
	out := map[string][]string{}
	for id, s := range servers {
		server, _ := s.(map[string]any)
		needs, _ := server["needs"].([]any)
		for _, n := range needs {
			need, _ := n.(map[string]any)
			if name, ok := need["name"].(string); ok && need["kind"] == NeedEnv && need["optional"] == true {
				out[id] = append(out[id], name)
			}
		}
	}
	return out
})

// NeedsOf returns what a server started through npx needs when it runs a
// package some baseline runs, whatever version or flags it was given: a
// hand-written chrome-devtools-mcp entry needs Chrome as much as the
// preset's does.
func NeedsOf(entry map[string]any) []Need {
	pkg := npxPackage(entry)
	if pkg == "" {
		return nil
	}
	return slices.Clone(needsByPackage()[pkg])
}

// needsByPackage maps each npx package a baseline runs to its needs, built
// once.
var needsByPackage = sync.OnceValue(func() map[string][]Need {
	f := load()
	ids := make([]string, 0, len(f.Servers))
	for id := range f.Servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := map[string][]Need{}
	for _, id := range ids {
		s, _ := Baseline(id)
		if pkg := npxPackage(s.Entry); pkg != "" {
			if _, ok := out[pkg]; !ok {
				out[pkg] = s.Needs
			}
		}
	}
	return out
})

// npxPackage is the package name (without its version) an npx entry runs,
// or "".
func npxPackage(entry map[string]any) string {
	if cmd, _ := entry["command"].(string); cmd != "npx" {
		return ""
	}
	args, _ := entry["args"].([]any)
	for _, a := range args {
		s, _ := a.(string)
		if s == "" || s[0] == '-' {
			continue
		}
		// @scope/name@version or name@version
		if at := strings.LastIndexByte(s, '@'); at > 0 {
			s = s[:at]
		}
		return s
	}
	return ""
}
