package mcpconfig

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/piagent/piagent/internal/imports"
)

func TestImportsPerLayer(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.cursor/mcp.json --
{"mcpServers": {"dup": {"command": "cursor", "env": {"A": "1"}}, "cur": {"command": "cur"}, "toString": {"command": "lost"}}}
-- home/.windsurf/mcp.json --
{"mcpServers": {"dup": {"command": "windsurf"}, "wind": {"command": "w"}}}
-- home/.pi/agent/mcp.json --
{"imports": ["vscode"]}
-- home/proj/.vscode/mcp.json --
{"mcpServers": {"vs": {"command": "vs"}}, "servers": {"real": {"type": "stdio", "command": "real"}, "cur": {"command": "union"}}}
-- home/proj/.mcp.json --
{"imports": ["cursor", "windsurf", 5], "mcpServers": {"dup": {"args": ["own"]}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"cur", "cur~", "dup", "real~", "vs", "wind"}, names(v)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	dup := mustServer(t, v, "dup")
	if diff := cmp.Diff(Entry{"command": "cursor", "env": map[string]any{"A": "1"}, "args": []any{"own"}}, dup.Entry); diff != "" {
		t.Errorf("dup (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shared-project:cursor:home/.cursor/mcp.json", "shared-project::home/proj/.mcp.json"}, contribSummary(root, dup)); diff != "" {
		t.Errorf("dup contributions (-want +got):\n%s", diff)
	}
	cur := mustServer(t, v, "cur")
	if cur.Scope != ScopeProject || cur.Source.Kind != "cursor" || rel(root, cur.Source.File) != "home/.cursor/mcp.json" || !cur.AdapterLoads {
		t.Errorf("cur = %+v", cur)
	}
	if cur.RepositoryReason != "imported by a repository layer (.mcp.json imports cursor)" {
		t.Errorf("cur reason = %q", cur.RepositoryReason)
	}
	vs := mustServer(t, v, "vs")
	if vs.Scope != ScopePiGlobal || !vs.RepositoryControlled || vs.RepositoryReason != "imported by vscode, whose file is in the project" {
		t.Errorf("vs = %+v", vs)
	}
	var real *Server
	for i := range v.Servers {
		if v.Servers[i].Name == "real" {
			real = &v.Servers[i]
		}
	}
	if real == nil || real.AdapterLoads || !real.RepositoryControlled || real.Entry["command"] != "real" {
		t.Errorf("real = %+v", real)
	}
	// The union-only "cur" follows the loaded one and never merges into it.
	if cur.Entry["command"] != "cur" {
		t.Errorf("union entry merged into cur: %v", cur.Entry)
	}

	wantDecls := []ImportDecl{
		{File: filepath.Join(root, "home/.pi/agent/mcp.json"), Layer: LayerPiGlobal, Kinds: []string{"vscode"}},
		{File: filepath.Join(root, "home/proj/.mcp.json"), Layer: LayerSharedProject, Kinds: []string{"cursor", "windsurf"}, Repository: true},
	}
	if diff := cmp.Diff(wantDecls, v.Imports); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	byKind := map[string][]ImportTarget{}
	for _, tg := range v.ImportTargets {
		byKind[tg.Kind] = append(byKind[tg.Kind], tg)
	}
	if diff := cmp.Diff([]string{"cursor", "windsurf", "vscode"}, kindsOf(v.ImportTargets)); diff != "" {
		t.Errorf("target kinds (-want +got):\n%s", diff)
	}
	c := byKind["cursor"][0]
	if c.Status != TargetLoaded || !c.Repository || !slices.Equal(c.DeclaredBy, []string{filepath.Join(root, "home/proj/.mcp.json")}) {
		t.Errorf("cursor target = %+v", c)
	}
	vt := byKind["vscode"][0]
	if !vt.Repository || rel(root, vt.Path) != "home/proj/.vscode/mcp.json" {
		t.Errorf("vscode target = %+v", vt)
	}
	for _, p := range []string{"home/.cursor/mcp.json", "home/.windsurf/mcp.json", "home/proj/.vscode/mcp.json"} {
		if !slices.Contains(v.Consulted, filepath.Join(root, p)) {
			t.Errorf("consulted lacks %s", p)
		}
	}
}

func kindsOf(ts []ImportTarget) []string {
	var out []string
	for _, t := range ts {
		if len(out) == 0 || out[len(out)-1] != t.Kind {
			out = append(out, t.Kind)
		}
	}
	return out
}

func TestImportFromGlobalIsNotRepository(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.cursor/mcp.json --
{"mcpServers": {"cur": {"command": "cur"}}}
-- home/.config/mcp/mcp.json --
{"imports": ["cursor", "nonsense"]}
`)
	v := loadAt(t, root, "home/proj", nil)
	s := mustServer(t, v, "cur")
	if s.RepositoryControlled || s.Scope != ScopeGlobal || s.Layer != LayerSharedGlobal {
		t.Errorf("cur = %+v", s)
	}
}

func TestHostDiscovery(t *testing.T) {
	t.Parallel()
	const hostFiles = `
-- home/.cursor/mcp.json --
{"mcpServers": {"cur": {"command": "cur"}, "both": {"command": "cursor", "env": {"A": "1"}}}}
-- home/.windsurf/mcp.json --
{"mcpServers": {"both": {"args": ["w"]}}}
-- home/.pi/agent/mcp.json --
{"mcpServers": {"both": {"env": {"B": "2"}}}}
`
	tests := []struct {
		name       string
		extra      string
		wantRepo   bool
		wantReason string
	}{
		{"on in global, no repository files", "-- home/.config/mcp/mcp.json --\n{\"settings\": {\"hostConfigDiscovery\": \"on\"}}\n", false, ""},
		{"switched on by the project", "-- home/proj/.mcp.json --\n{\"settings\": {\"hostConfigDiscovery\": \"on\"}}\n", true,
			"host discovery switched on by the project's .mcp.json"},
		{"on in global while .vscode/mcp.json exists",
			"-- home/.config/mcp/mcp.json --\n{\"settings\": {\"hostConfigDiscovery\": \"on\"}}\n-- home/proj/.vscode/mcp.json --\n{}\n", true,
			"host discovery is on and the repository's .vscode/mcp.json exists"},
		{"prompt loads nothing", "-- home/.config/mcp/mcp.json --\n{\"settings\": {\"hostConfigDiscovery\": \"prompt\"}}\n", false, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := fixture(t, hostFiles+tt.extra)
			v := loadAt(t, root, "home/proj", nil)
			if tt.wantReason == "none" {
				if diff := cmp.Diff([]string{"both"}, names(v)); diff != "" {
					t.Errorf("servers (-want +got):\n%s", diff)
				}
				return
			}
			cur := mustServer(t, v, "cur")
			if cur.Scope != ScopeHost || cur.Layer != LayerHost || cur.Source.Kind != "cursor" {
				t.Errorf("cur = %+v", cur)
			}
			if cur.RepositoryControlled != tt.wantRepo || cur.RepositoryReason != tt.wantReason {
				t.Errorf("cur repo=%v reason=%q", cur.RepositoryControlled, cur.RepositoryReason)
			}
			both := mustServer(t, v, "both")
			if diff := cmp.Diff(Entry{"command": "cursor", "args": []any{"w"}, "env": map[string]any{"B": "2"}}, both.Entry); diff != "" {
				t.Errorf("both (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"host-discovery:cursor:home/.cursor/mcp.json", "host-discovery:windsurf:home/.windsurf/mcp.json", "pi-global::home/.pi/agent/mcp.json"}, contribSummary(root, both)); diff != "" {
				t.Errorf("both contributions (-want +got):\n%s", diff)
			}
			if got := kindsOf(v.ImportTargets); !slices.Equal(got, imports.Kinds) {
				t.Errorf("target kinds = %v", got)
			}
			for _, tg := range v.ImportTargets {
				if len(tg.DeclaredBy) != 1 {
					t.Errorf("target %s declared by %v", tg.Path, tg.DeclaredBy)
				}
			}
		})
	}
}

func TestHostDiscoveryOffInExclusive(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.cursor/mcp.json --
{"mcpServers": {"cur": {"command": "cur"}}}
-- home/.pi/agent/mcp.json --
{"settings": {"hostConfigDiscovery": "on"}}
`)
	v := loadAt(t, root, "home/proj", env("PI_MCP_CONFIG_MODE", "exclusive"))
	if len(v.Servers) != 0 || len(v.ImportTargets) != 0 {
		t.Errorf("servers %v targets %v", names(v), v.ImportTargets)
	}
}

func TestUnreadableImportReported(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/proj/.vscode/mcp.json --
{"mcpServers": {
-- home/proj/.mcp.json --
{"imports": ["vscode"], "mcpServers": {"p": {"command": "p"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"p"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if len(v.Skipped) != 1 || v.Skipped[0].Kind != "vscode" || v.Skipped[0].Line == 0 {
		t.Errorf("skipped = %+v", v.Skipped)
	}
	if len(v.ImportTargets) != 1 || v.ImportTargets[0].Status != TargetUnreadable || !v.ImportTargets[0].Repository {
		t.Errorf("targets = %+v", v.ImportTargets)
	}
}

func TestImportPrototypeKindIsFatal(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/proj/.mcp.json --
{"imports": ["constructor"], "mcpServers": {"p": {"command": "p"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	f := v.AdapterFails()
	if len(f) != 1 || !strings.Contains(f[0].Reason, `"constructor"`) || f[0].Layer != LayerSharedProject {
		t.Errorf("fails = %+v", f)
	}
}
