package mcpconfig

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPackages(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/proj/.pi/settings.json --
// JSONC is fine here
{"packages": ["./pkgs/local", {"source": "npm:@acme/tools@1.2.3"}, "npm:nomcp"]}
-- home/proj/.pi/pkgs/local/package.json --
{"name": "@me/local", "pi": {"mcp": ["mcp.json", "../escape.json"]}}
-- home/proj/.pi/pkgs/local/mcp.json --
{"mcpServers": {"srv": {"command": "local"}, "my.srv": {"command": "dots"}}}
-- home/proj/.pi/npm/node_modules/@acme/tools/package.json --
{"name": "@acme/tools", "pi": {"mcp": "config/mcp.json"}}
-- home/proj/.pi/npm/node_modules/@acme/tools/config/mcp.json --
{"mcpServers": {"srv": {"url": "https://acme"}}}
-- home/proj/.pi/npm/node_modules/nomcp/package.json --
{"name": "nomcp"}
-- home/.pi/agent/settings.json --
{"packages": ["git:github.com/o/repo@v1", "https://github.com/o/other.git", "/abs/missing"]}
-- home/.pi/agent/git/github.com/o/repo/package.json --
{"name": "repo", "pi": {"mcp": "mcp.json"}}
-- home/.pi/agent/git/github.com/o/repo/mcp.json --
{"mcpServers": {"g": {"command": "git"}, "dup": {"command": "user"}}}
-- home/.pi/agent/git/github.com/o/other/package.json --
{"name": "@me/local", "pi": {"mcp": "mcp.json"}}
-- home/.pi/agent/git/github.com/o/other/mcp.json --
{"mcpServers": {"srv": {"command": "shadowed by the project package"}}}
-- home/proj/.mcp.json --
{"mcpServers": {"repo__g": {"args": ["override"]}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	want := []string{"acme_tools__srv", "me_local__my_srv", "me_local__srv", "repo__dup", "repo__g"}
	if diff := cmp.Diff(want, names(v)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	s := mustServer(t, v, "me_local__srv")
	if s.Entry["command"] != "local" || s.Scope != ScopePackage || s.Source.Kind != "package" || !s.RepositoryControlled {
		t.Errorf("me_local__srv = %+v", s)
	}
	if s.RepositoryReason != "Pi package listed in .pi/settings.json" {
		t.Errorf("reason = %q", s.RepositoryReason)
	}
	g := mustServer(t, v, "repo__g")
	if diff := cmp.Diff(Entry{"command": "git", "args": []any{"override"}}, g.Entry); diff != "" {
		t.Errorf("repo__g (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"package::home/.pi/agent/git/github.com/o/repo/mcp.json", "shared-project::home/proj/.mcp.json"}, contribSummary(root, g)); diff != "" {
		t.Errorf("repo__g contributions (-want +got):\n%s", diff)
	}
	if g.Contributions[0].Repository {
		t.Error("user package marked repository-controlled")
	}
	if !g.RepositoryControlled || g.Scope != ScopeProject {
		t.Errorf("repo__g repo=%v scope=%s", g.RepositoryControlled, g.Scope)
	}
	if d := mustServer(t, v, "repo__dup"); d.RepositoryControlled {
		t.Errorf("repo__dup repository-controlled: %s", d.RepositoryReason)
	}
	for _, p := range []string{"home/proj/.pi/settings.json", "home/.pi/agent/settings.json", "home/.pi/agent/git/github.com/o/repo/package.json", "home/proj/.pi/npm/node_modules/nomcp/package.json"} {
		if !slices.Contains(v.Consulted, filepath.Join(root, p)) {
			t.Errorf("consulted lacks %s", p)
		}
	}
	if len(v.AdapterFails()) != 0 {
		t.Errorf("fatal: %+v", v.AdapterFails())
	}
}

func TestPackageRootResolution(t *testing.T) {
	t.Parallel()
	base := "/b"
	tests := map[string]string{
		"npm:foo":                     "/b/npm/node_modules/foo",
		"npm: @s/p@^1":                "/b/npm/node_modules/@s/p",
		"npm:../../x":                 "",
		"git:github.com/o/r":          "/b/git/github.com/o/r",
		"git:github.com/o/r@main":     "/b/git/github.com/o/r",
		"https://github.com/o/r.git":  "/b/git/github.com/o/r",
		"ssh://git@github.com/o/r":    "/b/git/github.com/o/r",
		"git@github.com:o/r.git":      "/b/git/github.com/o/r",
		"git:/abs":                    "",
		"./local":                     "/b/local",
		"/abs/pkg":                    "/abs/pkg",
		"../up":                       "/up",
		"git:github.com/../../escape": "",
	}
	for src, want := range tests {
		if got := resolvePackageRoot(src, base); got != want {
			t.Errorf("%q: got %q, want %q", src, got, want)
		}
	}
}

func TestPackageSettingsBrokenIsFatal(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"broken json":       `{"packages": [`,
		"blank":             ``,
		"not an object":     `[]`,
		"packages not list": `{"packages": {}}`,
		"bad entry":         `{"packages": [3]}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := fixture(t, "-- home/proj/.pi/settings.json --\n"+body+"\n-- home/proj/.mcp.json --\n{\"mcpServers\": {\"p\": {\"command\": \"p\"}}}\n")
			v := loadAt(t, root, "home/proj", nil)
			f := v.AdapterFails()
			if len(f) != 1 || rel(root, f[0].Path) != "home/proj/.pi/settings.json" || f[0].Layer != LayerPackage {
				t.Fatalf("fails = %+v", f)
			}
			if name == "broken json" && (f[0].Line != 2 || f[0].Column == 0) {
				t.Errorf("no position: %+v", f[0])
			}
			if diff := cmp.Diff([]string{"p"}, names(v)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

const pluginManifest = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "tools", "version": "1.0.0"}`
const pluginMCP = `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {
  "run": {"type": "stdio", "command": "./bin/run", "args": ["${PLUGIN_ROOT}/a"], "env": {"K": "${PLUGIN_DATA}"}},
  "web": {"type": "streamable-http", "url": "https://tools.example/mcp", "headers": {"X-A": "1"}},
  "loop": {"type": "sse", "url": "http://127.0.0.1:9/mcp"},
  "plainhttp": {"type": "sse", "url": "http://tools.example/mcp"},
  "interp": {"type": "sse", "url": "https://${HOST}/mcp"},
  "extra": {"type": "stdio", "command": "x", "shell": true},
  "abs": {"type": "stdio", "command": "/bin/sh"},
  "reserved": {"type": "stdio", "command": "x", "env": {"PLUGIN_ROOT": "x"}}
}}`

func TestAgentPlugins(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"settings": {"agentPluginPaths": ["~/plugins/tools", "./local", 7]}}
-- home/plugins/tools/plugin.json --
`+pluginManifest+`
-- home/plugins/tools/mcp.json --
`+pluginMCP+`
-- home/plugins/tools/bin/run --
#!/bin/sh
-- home/proj/local/plugin.json --
{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "loc.al"}
-- home/proj/local/mcp.json --
{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "node"}}}
-- home/proj/.pi/mcp.json --
{"mcpServers": {"tools__run": {"env": {"K": "v"}}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"loc_al__s", "tools__loop", "tools__run", "tools__web"}, names(v)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	pluginRoot := filepath.Join(root, "home/plugins/tools")
	dataDir := filepath.Join(root, "home/.pi/agent/agent-plugin-data/tools")
	run := mustServer(t, v, "tools__run")
	want := Entry{
		"command": filepath.Join(pluginRoot, "bin/run"), "args": []any{pluginRoot + "/a"},
		"env": map[string]any{"K": "v"}, "cwd": pluginRoot, "pluginDataDir": dataDir,
	}
	if diff := cmp.Diff(want, run.Entry); diff != "" {
		t.Errorf("tools__run (-want +got):\n%s", diff)
	}
	first := run.Contributions[0]
	wantFirst := Entry{
		"command": filepath.Join(pluginRoot, "bin/run"), "args": []any{pluginRoot + "/a"},
		"env": map[string]any{"K": dataDir, "PLUGIN_ROOT": pluginRoot, "PLUGIN_DATA": dataDir}, "cwd": pluginRoot,
		"pluginDataDir": dataDir, "literalEnv": true,
	}
	if diff := cmp.Diff(wantFirst, first.Entry); diff != "" {
		t.Errorf("plugin fragment (-want +got):\n%s", diff)
	}
	if first.Layer != LayerAgentPlugin || first.Repository {
		t.Errorf("plugin fragment = %+v", first)
	}
	web := mustServer(t, v, "tools__web")
	if diff := cmp.Diff(Entry{"url": "https://tools.example/mcp", "httpTransport": "streamable-http", "headers": map[string]any{"X-A": "1"}}, web.Entry); diff != "" {
		t.Errorf("tools__web (-want +got):\n%s", diff)
	}
	if web.Source.Kind != "agent-plugin" || web.Scope != ScopePackage {
		t.Errorf("web source = %+v scope %s", web.Source, web.Scope)
	}
	loc := mustServer(t, v, "loc_al__s")
	if !loc.RepositoryControlled || loc.RepositoryReason != "plugin path inside the project" {
		t.Errorf("loc_al__s repo=%v reason=%q", loc.RepositoryControlled, loc.RepositoryReason)
	}
}

func TestAgentPluginChosenByProject(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/proj/.mcp.json --
{"settings": {"agentPluginPaths": ["~/plugins/tools"]}}
-- home/plugins/tools/plugin.json --
`+pluginManifest+`
-- home/plugins/tools/mcp.json --
{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "node"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	s := mustServer(t, v, "tools__s")
	if !s.RepositoryControlled || s.RepositoryReason != "plugin path chosen by the project's .mcp.json" {
		t.Errorf("repo=%v reason=%q", s.RepositoryControlled, s.RepositoryReason)
	}
}

func TestAgentPluginInvalid(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ manifest, mcp string }{
		"wrong schema":     {`{"$schema": "x", "name": "tools"}`, pluginMCP},
		"bad name":         {`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "a--b"}`, pluginMCP},
		"jsonc not json":   {`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "tools",}`, pluginMCP},
		"mcp extra field":  {pluginManifest, `{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {}, "x": 1}`},
		"mcp wrong schema": {pluginManifest, `{"mcpServers": {"s": {"type": "stdio", "command": "node"}}}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := fixture(t, "-- home/.pi/agent/mcp.json --\n{\"settings\": {\"agentPluginPaths\": [\"~/p\"]}}\n-- home/p/plugin.json --\n"+tt.manifest+"\n-- home/p/mcp.json --\n"+tt.mcp+"\n")
			v := loadAt(t, root, "home/proj", nil)
			if len(v.Servers) != 0 {
				t.Errorf("servers = %v", names(v))
			}
			if len(v.Skipped) != 1 || v.Skipped[0].Layer != LayerAgentPlugin {
				t.Errorf("skipped = %+v", v.Skipped)
			}
		})
	}
}

func TestPluginBeatsPackage(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"settings": {"agentPluginPaths": ["~/plugins/tools"]}}
-- home/plugins/tools/plugin.json --
`+pluginManifest+`
-- home/plugins/tools/mcp.json --
{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "node"}}}
-- home/.pi/agent/settings.json --
{"packages": ["./tools"]}
-- home/.pi/agent/tools/package.json --
{"name": "tools", "pi": {"mcp": "mcp.json"}}
-- home/.pi/agent/tools/mcp.json --
{"mcpServers": {"s": {"url": "https://pkg"}, "t": {"url": "https://pkg"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	s := mustServer(t, v, "tools__s")
	if s.Entry["command"] != "node" || len(s.Contributions) != 1 || s.Layer != LayerAgentPlugin {
		t.Errorf("tools__s = %+v", s)
	}
	if tt := mustServer(t, v, "tools__t"); tt.Layer != LayerPackage {
		t.Errorf("tools__t layer = %s", tt.Layer)
	}
}

func TestClaudePlugins(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"claudePlugins": [{"path": "~/cp", "mcp": true}, {"path": "~/cp", "mcp": true}, {"path": "~/skillsonly", "skills": true}, {"path": "~/bad", "mcp": "yes"}],
 "mcpServers": {"a-b": {"command": "higher"}, "over": {"args": ["hi"]}}}
-- home/cp/.claude-plugin/plugin.json --
{"name": "my-plugin", "version": "1"}
-- home/cp/.mcp.json --
{"mcpServers": {
  "tool": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/tool", "args": ["${CLAUDE_PLUGIN_ROOT}/x"]},
  "a_b": {"command": "shadowed"},
  "over": {"command": "base", "args": ["lo"]},
  "two": {"command": "x", "url": "https://y"},
  " ": {"command": "blank name"},
  "remote": {"url": "https://r"}
}}
-- home/skillsonly/.mcp.json --
{"mcpServers": {"no": {"command": "no"}}}
-- home/bad/.mcp.json --
{"mcpServers": {"no2": {"command": "no"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"a-b", "over", "remote", "tool"}, names(v)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	cp := filepath.Join(root, "home/cp")
	tool := mustServer(t, v, "tool")
	want := Entry{"command": cp + "/bin/tool", "args": []any{cp + "/x"}, "env": map[string]any{"CLAUDE_PLUGIN_ROOT": cp}}
	if diff := cmp.Diff(want, tool.Entry); diff != "" {
		t.Errorf("tool (-want +got):\n%s", diff)
	}
	if tool.Source.Kind != "claude-plugin" || tool.RepositoryControlled || rel(root, tool.Source.File) != "home/cp/.mcp.json" {
		t.Errorf("tool = %+v", tool)
	}
	if r := mustServer(t, v, "remote"); r.Entry["env"] != nil {
		t.Errorf("remote got env: %v", r.Entry)
	}
	over := mustServer(t, v, "over")
	if diff := cmp.Diff(Entry{"command": "base", "args": []any{"hi"}, "env": map[string]any{"CLAUDE_PLUGIN_ROOT": cp}}, over.Entry); diff != "" {
		t.Errorf("over (-want +got):\n%s", diff)
	}
	if over.Layer != LayerPiGlobal {
		t.Errorf("over layer = %s", over.Layer)
	}
}

func TestClaudePluginsFromProject(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"claudePlugins": [{"path": "~/cp", "mcp": true}]}
-- home/proj/.mcp.json --
{"claudePlugins": [{"path": "./vendor/cp", "mcp": true}]}
-- home/cp/.mcp.json --
{"mcpServers": {"user": {"command": "u"}}}
-- home/proj/vendor/cp/.mcp.json --
{"mcpServers": {"repo": {"command": "r"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"repo"}, names(v)); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	if s := mustServer(t, v, "repo"); !s.RepositoryControlled || s.RepositoryReason != "Claude plugin inside the project" {
		t.Errorf("repo = %v %q", s.RepositoryControlled, s.RepositoryReason)
	}

	root = fixture(t, `
-- home/proj/.mcp.json --
{"claudePlugins": [{"path": "~/cp", "mcp": true}]}
-- home/cp/.mcp.json --
{"mcpServers": {"user": {"command": "u"}}}
`)
	v = loadAt(t, root, "home/proj", nil)
	if s := mustServer(t, v, "user"); !s.RepositoryControlled || !strings.HasPrefix(s.RepositoryReason, "Claude plugin chosen by the project's .mcp.json") {
		t.Errorf("user = %v %q", s.RepositoryControlled, s.RepositoryReason)
	}
}

func TestClaudePluginsExclusive(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"claudePlugins": [{"path": "~/cp", "mcp": true}], "settings": {"agentPluginPaths": ["~/ap"]}}
-- home/cp/.mcp.json --
{"mcpServers": {"c": {"command": "c"}}}
-- home/ap/plugin.json --
`+pluginManifest+`
-- home/ap/mcp.json --
{"$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json", "mcpServers": {"s": {"type": "stdio", "command": "node"}}}
-- home/.pi/agent/settings.json --
{"packages": ["./p"]}
-- home/.pi/agent/p/package.json --
{"name": "p", "pi": {"mcp": "mcp.json"}}
-- home/.pi/agent/p/mcp.json --
{"mcpServers": {"s": {"command": "x"}}}
`)
	v := loadAt(t, root, "home/proj", env("PI_MCP_CONFIG_MODE", "exclusive"))
	if diff := cmp.Diff([]string{"c"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	v = loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"c", "p__s", "tools__s"}, names(v)); diff != "" {
		t.Errorf("servers outside exclusive (-want +got):\n%s", diff)
	}
}

func TestServerNamespace(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a-b":                   "a_b",
		"plain_1":               "plain_1",
		"a.b":                   "_mcpns_a_2e_b",
		"_mcpns_x":              "_mcpns___mcpns__x",
		"é":                     "_mcpns__e9_",
		strings.Repeat("a", 59): strings.Repeat("a", 59),
	}
	for in, want := range tests {
		if got := serverNamespace(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	long := serverNamespace(strings.Repeat("a", 60))
	if len(long) != 59 || !strings.HasPrefix(long, "_mcpns__h_"+strings.Repeat("a", 32)+"_") {
		t.Errorf("long = %q (%d)", long, len(long))
	}
}
