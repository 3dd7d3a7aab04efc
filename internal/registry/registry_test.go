package registry

import (
	"slices"
	"testing"
)

func TestListAndMatch(t *testing.T) {
	t.Parallel()
	in := Input{Home: "/h", AgentDir: "/h/.pi/agent", Project: "/p", ConfigDir: ".pi",
		Consulted: []string{"/p/.mcp.json", "/a/.mcp.json"}, Binaries: []string{"/usr/bin/piagent"}}
	entries := List(in)
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			t.Errorf("%s listed twice", e.Path)
		}
		seen[e.Path] = true
	}
	set := NewSet(entries)
	for _, tc := range []struct {
		p     string
		match bool
	}{
		{"/h/.pi/piagent-mcp-approvals.json", true},
		{"/h/.pi/piagent-mcp-approvals.json.lock", true},
		{"/h/.pi/piagent-modes.json", true},
		{"/h/.pi/piagent/launch/x.json", true},
		{"/h/.pi/agent/trust.json", true},
		{"/h/.pi/agent/extensions/a/index.ts", true},
		{"/h/.pi/agent/mcp-npx-cache.json", true},
		{"/h/.PI/AGENT/SETTINGS.JSON", true}, // case-folding file systems
		{"/p/.pi/extensions/x.ts", true},
		{"/p/.git/hooks/pre-commit", true},
		{"/p/.git/config", true},
		{"/a/.mcp.json", true},
		{"/usr/bin/piagent", true},
		{"/h/.pi/agent/sessions/s.jsonl", false},
		{"/p/src/main.go", false},
		{"/p/.git/HEAD", false},
		{"/p/.pi-other", false},
		{"/tmp/jiti/guard-1a2b.cjs", true}, // Pi loads it at its next start
		{"/tmp/node-compile-cache/v22/x", true},
		{"/tmp/jiti-other", false},
	} {
		if _, ok := set.Match(tc.p); ok != tc.match {
			t.Errorf("Match(%s) = %v, want %v", tc.p, ok, tc.match)
		}
	}
	for _, tc := range []struct {
		p    string
		hold bool
	}{
		{"/h/.pi", true}, {"/h", true}, {"/", true}, {"/p", true}, {"/p/.git", true},
		{"/p/src", false}, {"/tmp", true}, {"/tmp/build", false}, {"/h/.pi/agent/sessions", false},
	} {
		if _, ok := set.Holds(tc.p); ok != tc.hold {
			t.Errorf("Holds(%s) = %v, want %v", tc.p, ok, tc.hold)
		}
	}
	// the adapter's cache, the catalogue pins, the mode store, both policies
	if w := Watched(entries); len(w) != 5 || !slices.Contains(w, CataloguePins("/h")) {
		t.Errorf("Watched = %v", w)
	}
}

func TestNoProject(t *testing.T) {
	t.Parallel()
	for _, e := range List(Input{Home: "/h", AgentDir: "/h/.pi/agent"}) {
		if e.Path == "" || e.Path[0] != '/' {
			t.Errorf("entry %+v is not absolute", e)
		}
	}
}
