package preset

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The seed's "Preset MCP" table.
var seedTable = map[string][]string{
	"minimal":      {},
	"docs":         {"context7"},
	"browser":      {"chrome-devtools", "playwright"},
	"github":       {"github"},
	"design":       {"figma"},
	"design-local": {"figma-desktop"},
	"web":          {"context7", "chrome-devtools", "playwright"},
	"core":         {"context7", "chrome-devtools", "github"},
	"popular":      {"context7", "chrome-devtools", "github", "playwright", "figma"},
	"all":          {"context7", "chrome-devtools", "github", "playwright", "figma", "figma-desktop"},
}

// The seed's "Server baseline" snippets, exactly as written there.
var seedSnippets = map[string]string{
	"context7": `{
  "mcpServers": {
    "context7": {
      "command": "npx",
      "args": ["-y", "@upstash/context7-mcp@3.2.4"],
      "env": {
        "CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"
      },
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
	"figma": `{
  "mcpServers": {
    "figma": {
      "url": "https://mcp.figma.com/mcp",
      "auth": "oauth",
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
	"figma-desktop": `{
  "mcpServers": {
    "figma-desktop": {
      "url": "http://127.0.0.1:3845/mcp",
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
	"chrome-devtools": `{
  "mcpServers": {
    "chrome-devtools": {
      "command": "npx",
      "args": ["-y", "chrome-devtools-mcp@1.6.0", "--no-performance-crux"],
      "env": {
        "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1",
        "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS": "1"
      },
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
	"playwright": `{
  "mcpServers": {
    "playwright": {
      "command": "npx",
      "args": ["-y", "@playwright/mcp@0.0.78"],
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
	"github": `{
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": [
        "run",
        "-i",
        "--rm",
        "-e",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "-e",
        "GITHUB_READ_ONLY=1",
        "-e",
        "GITHUB_LOCKDOWN_MODE=1",
        "ghcr.io/github/github-mcp-server@sha256:2b0c48b070f61e9d3969269ead600f62d00fb237b60ac849ef3d166ee7de9ad3"
      ],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"
      },
      "lifecycle": "lazy",
      "directTools": false
    }
  }
}`,
}

func TestNames(t *testing.T) {
	t.Parallel()
	want := []string{"minimal", "docs", "browser", "github", "design", "design-local", "web", "core", "popular", "all"}
	if diff := cmp.Diff(want, Names()); diff != "" {
		t.Fatalf("Names (-want +got):\n%s", diff)
	}
}

func TestMembership(t *testing.T) {
	t.Parallel()
	for name, want := range seedTable {
		p, ok := Get(name)
		if !ok {
			t.Errorf("preset %q missing", name)
			continue
		}
		if p.Name != name || p.Purpose == "" {
			t.Errorf("preset %q: name %q, purpose %q", name, p.Name, p.Purpose)
		}
		if diff := cmp.Diff(want, p.Servers, cmpEmpty); diff != "" {
			t.Errorf("preset %q servers (-seed +got):\n%s", name, diff)
		}
	}
	if len(Names()) != len(seedTable) {
		t.Errorf("%d presets, the seed has %d", len(Names()), len(seedTable))
	}
	if _, ok := Get("nope"); ok {
		t.Error("unknown preset found")
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

func TestCompositePresets(t *testing.T) {
	t.Parallel()
	core, _ := Get("core")
	popular, _ := Get("popular")
	all, _ := Get("all")
	if diff := cmp.Diff(append(slices.Clone(core.Servers), "playwright", "figma"), popular.Servers); diff != "" {
		t.Errorf("popular != core + playwright + figma (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(slices.Clone(popular.Servers), "figma-desktop"), all.Servers); diff != "" {
		t.Errorf("all != popular + figma-desktop (-want +got):\n%s", diff)
	}
	design, _ := Get("design")
	local, _ := Get("design-local")
	if !slices.Equal(design.Servers, []string{"figma"}) || !slices.Equal(local.Servers, []string{"figma-desktop"}) {
		t.Errorf("design = %v, design-local = %v: design is Figma remote, design-local Figma desktop", design.Servers, local.Servers)
	}
}

// The embedded definitions are byte-equal (compact, same key order) to the
// seed's snippets.
func TestDefinitionsMatchSeed(t *testing.T) {
	t.Parallel()
	for id, snippet := range seedSnippets {
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(snippet), &doc); err != nil {
			t.Fatalf("%s snippet: %v", id, err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, doc.MCPServers[id]); err != nil {
			t.Fatal(err)
		}
		s, ok := Baseline(id)
		if !ok {
			t.Errorf("no baseline for %q", id)
			continue
		}
		if s.ID != id {
			t.Errorf("Baseline(%q).ID = %q", id, s.ID)
		}
		if !bytes.Equal(want.Bytes(), s.JSON) {
			t.Errorf("%s definition differs from the seed:\nseed: %s\ngot:  %s", id, want.Bytes(), s.JSON)
		}
		var wantEntry map[string]any
		if err := json.Unmarshal(want.Bytes(), &wantEntry); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantEntry, s.Entry); diff != "" {
			t.Errorf("%s Entry (-seed +got):\n%s", id, diff)
		}
	}
	if diff := cmp.Diff(sortedKeys(seedSnippets), Owned()); diff != "" {
		t.Errorf("Owned (-seed +got):\n%s", diff)
	}
	if _, ok := Baseline("nope"); ok {
		t.Error("unknown server found")
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestNeeds(t *testing.T) {
	t.Parallel()
	type need struct {
		Kind, Name string
		Optional   bool
	}
	want := map[string][]need{
		"context7":        {{NeedEnv, "CONTEXT7_API_KEY", true}},
		"chrome-devtools": {{NeedChrome, "Chrome", false}},
		"playwright":      {{NeedChrome, "Chrome", false}},
		"github":          {{NeedDocker, "Docker", false}, {NeedEnv, "GITHUB_PERSONAL_ACCESS_TOKEN", false}},
		"figma":           {{NeedOAuth, "figma", false}},
		"figma-desktop":   {{NeedFigmaDesktop, "Figma", false}},
	}
	for id, w := range want {
		s, _ := Baseline(id)
		var got []need
		for _, n := range s.Needs {
			got = append(got, need{n.Kind, n.Name, n.Optional})
			if n.Text == "" {
				t.Errorf("%s: need %s has no text", id, n.Kind)
			}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s needs (-want +got):\n%s", id, diff)
		}
	}
	figma, _ := Baseline("figma")
	if !strings.Contains(figma.Needs[0].Text, "/mcp-auth figma") {
		t.Errorf("figma need text %q does not name /mcp-auth figma", figma.Needs[0].Text)
	}
	desktop, _ := Baseline("figma-desktop")
	if !strings.Contains(desktop.Needs[0].Text, "127.0.0.1:3845") {
		t.Errorf("figma-desktop need text %q does not name the port", desktop.Needs[0].Text)
	}
}

func TestOptionalVars(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]string{"CONTEXT7_API_KEY"}, OptionalVars("context7")); diff != "" {
		t.Error(diff)
	}
	for _, id := range []string{"github", "figma", "nope"} {
		if got := OptionalVars(id); got != nil {
			t.Errorf("OptionalVars(%q) = %v, want nil", id, got)
		}
	}
}

// Every ${VAR} a baseline references is listed as an env need, so the CLI
// can say what to export (or that it is optional).
func TestReferencedVarsAreNeeds(t *testing.T) {
	t.Parallel()
	ref := regexp.MustCompile(`\$\{(\w+)\}`)
	for _, id := range Owned() {
		s, _ := Baseline(id)
		var env []string
		for _, n := range s.Needs {
			if n.Kind == NeedEnv {
				env = append(env, n.Name)
			}
		}
		for _, m := range ref.FindAllSubmatch(s.JSON, -1) {
			if !slices.Contains(env, string(m[1])) {
				t.Errorf("%s references ${%s} but has no env need for it", id, m[1])
			}
		}
	}
}

func TestSafeDefaults(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		p, _ := Get(name)
		if diff := cmp.Diff(map[string]any{"directTools": false}, p.Settings); diff != "" {
			t.Errorf("preset %s settings (-want +got):\n%s", name, diff)
		}
	}
	for _, id := range Owned() {
		s, _ := Baseline(id)
		if s.Entry["directTools"] != false || s.Entry["lifecycle"] != "lazy" {
			t.Errorf("%s: directTools %v, lifecycle %v", id, s.Entry["directTools"], s.Entry["lifecycle"])
		}
	}
}

func TestCopies(t *testing.T) {
	t.Parallel()
	s, _ := Baseline("github")
	s.Entry["command"] = "evil"
	s.Entry["args"].([]any)[0] = "evil"
	s.Entry["env"].(map[string]any)["X"] = "y"
	s.JSON[0] = 'X'
	s.Needs[0].Text = "evil"
	p, _ := Get("core")
	p.Servers[0] = "evil"
	p.Settings["directTools"] = true

	s2, _ := Baseline("github")
	var want map[string]any
	if err := json.Unmarshal([]byte(seedSnippets["github"]), &struct {
		M *map[string]any `json:"mcpServers"`
	}{&want}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want["github"], s2.Entry); diff != "" {
		t.Errorf("embedded entry changed (-seed +got):\n%s", diff)
	}
	if s2.JSON[0] != '{' || s2.Needs[0].Text == "evil" {
		t.Error("embedded JSON or needs changed")
	}
	p2, _ := Get("core")
	if p2.Servers[0] != "context7" || p2.Settings["directTools"] != false {
		t.Errorf("embedded preset changed: %+v", p2)
	}
	owned := Owned()
	owned[0] = "evil"
	if Owned()[0] == "evil" {
		t.Error("Owned shares its slice")
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	good := `{"version":1,"servers":{"a":{"entry":{"command":"x"},"needs":[{"kind":"env","name":"V","text":"t"}]}},` +
		`"presets":[{"name":"p","purpose":"q","servers":["a"],"settings":{}}]}`
	if _, err := parse([]byte(good)); err != nil {
		t.Fatalf("good file rejected: %v", err)
	}
	bad := map[string]string{
		"unknown field":       strings.Replace(good, `"version":1`, `"version":1,"extra":1`, 1),
		"version":             strings.Replace(good, `"version":1`, `"version":2`, 1),
		"unknown server":      strings.Replace(good, `"servers":["a"]`, `"servers":["b"]`, 1),
		"unknown need kind":   strings.Replace(good, `"kind":"env"`, `"kind":"magic"`, 1),
		"need without text":   strings.Replace(good, `"text":"t"`, `"text":""`, 1),
		"entry not an object": strings.Replace(good, `{"command":"x"}`, `[1]`, 1),
		"repeated preset":     strings.Replace(good, `"settings":{}}]`, `"settings":{}},{"name":"p","purpose":"","servers":[],"settings":{}}]`, 1),
		"settings missing":    strings.Replace(good, `,"settings":{}`, ``, 1),
		"trailing data":       good + `{}`,
		"Version key case":    strings.Replace(good, `"version":1`, `"Version":1`, 1),
		"Kind key case":       strings.Replace(good, `"kind":"env"`, `"Kind":"env"`, 1),
		"Entry key case":      strings.Replace(good, `"entry":`, `"Entry":`, 1),
	}
	for name, data := range bad {
		if _, err := parse([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestOptionalVarsAgree: the lean reading of the optional variables is
// what the strict decoding of the catalogue says, for every server.
func TestOptionalVarsAgree(t *testing.T) {
	f := load()
	optional := 0
	for id, s := range f.Servers {
		var want []string
		for _, n := range s.Needs {
			if n.Kind == NeedEnv && n.Optional {
				want = append(want, n.Name)
			}
		}
		optional += len(want)
		if got := OptionalVars(id); !slices.Equal(got, want) {
			t.Errorf("OptionalVars(%q) = %q, want %q", id, got, want)
		}
	}
	if optional == 0 {
		t.Fatal("no server has an optional variable: the test compares nothing")
	}
	if got := OptionalVars("not-a-preset"); got != nil {
		t.Errorf("OptionalVars of an unknown server = %q", got)
	}
}
