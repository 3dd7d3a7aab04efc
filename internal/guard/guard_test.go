package guard

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/mcpconfig"
)

type spec struct {
	entry    map[string]any
	repo     bool
	approved bool
}

const home, cwd = "/home/u", "/home/u/proj"

// world builds a gate from server specs: repository servers are approved
// when the spec says so. settings is the merged settings block.
func world(t testing.TB, settings map[string]any, servers map[string]spec) *gate.Gate {
	t.Helper()
	v := &mcpconfig.View{Home: home, Cwd: cwd, AgentDir: filepath.Join(home, ".pi", "agent"), ConfigDir: ".pi", Settings: settings}
	if v.Settings == nil {
		v.Settings = map[string]any{}
	}
	for name, s := range servers {
		layer := mcpconfig.LayerSharedGlobal
		file := filepath.Join(home, ".config/mcp/mcp.json")
		if s.repo {
			layer, file = mcpconfig.LayerSharedProject, filepath.Join(cwd, ".mcp.json")
		}
		v.Servers = append(v.Servers, mcpconfig.Server{Name: name, Entry: s.entry, Scope: "x", Layer: layer,
			Source: mcpconfig.Source{File: file}, AdapterLoads: true, RepositoryControlled: s.repo, RepositoryReason: "declared in the project's .mcp.json",
			Contributions: []mcpconfig.Contribution{{Layer: layer, File: file, Entry: s.entry, Repository: s.repo}}})
	}
	v.Layers = []mcpconfig.Layer{{ID: mcpconfig.LayerSharedProject, Path: filepath.Join(cwd, ".mcp.json")}}
	env := func(k string) string {
		if k == "PATH" {
			return "/usr/bin:/bin"
		}
		return ""
	}
	in := gate.Input{View: v, Project: cwd, Getenv: env, FS: gate.OSFS}
	first := gate.Compute(in)
	store := &approval.Data{}
	for _, s := range first.Servers {
		if servers[s.Name].approved {
			store.Set(cwd, s.Name, approval.Decision{Decision: "approved", Digest: s.Digest, Files: map[string]string{}})
		}
	}
	in.Store = store
	return gate.Compute(in)
}

func cache(servers map[string][]string) *mcpcache.Cache {
	c := &mcpcache.Cache{Version: 1, Servers: map[string]mcpcache.ServerEntry{}}
	for name, tools := range servers {
		e := mcpcache.ServerEntry{CachedAt: time.Now()}
		for _, t := range tools {
			e.Tools = append(e.Tools, mcpcache.Tool{Name: t})
		}
		c.Servers[name] = e
	}
	return c
}

func url(u string) map[string]any { return map[string]any{"url": u} }

func with(e map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestDecideSurfaces(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{
		"repo-tools": {entry: with(url("https://r.example"), "directTools", true), repo: true},
		"approved":   {entry: with(url("https://a.example"), "directTools", true), repo: true, approved: true},
		"mine":       {entry: with(url("https://m.example"), "directTools", true)},
		"a.b c":      {entry: with(url("https://d.example"), "directTools", true), repo: true},
		"foo-mcp":    {entry: with(url("https://f.example"), "directTools", true, "toolPrefix", "short"), repo: true},
		"foo":        {entry: with(url("https://g.example"), "directTools", true, "toolPrefix", "short"), approved: true, repo: true},
		"off":        {entry: with(url("https://o.example"), "disabled", true), repo: true, approved: true},
		"hidden":     {entry: url("https://h.example"), repo: true},
	})
	c := cache(map[string][]string{"repo-tools": {"echo"}, "approved": {"echo"}, "mine": {"echo"}, "hidden": {"secret_tool"}})
	s := NewSnapshot(g, Options{Cache: c, AdapterPath: "/x/pi-mcp-adapter/index.ts"})
	cases := []struct {
		name   string
		call   Call
		action string
		code   string
		server string
	}{
		{"proxy with unapproved server", Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "repo-tools"}}, Block, CodeServer, "repo-tools"},
		{"proxy with approved server", Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "approved"}}, Allow, CodeOK, ""},
		{"proxy with user's server", Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "mine"}}, Allow, CodeOK, ""},
		{"proxy server field is authoritative even with a list call", Call{ToolName: "mcp", Input: map[string]any{"server": "repo-tools"}}, Block, CodeServer, "repo-tools"},
		{"proxy connect", Call{ToolName: "mcp", Input: map[string]any{"connect": "repo-tools"}}, Block, CodeServer, "repo-tools"},
		{"proxy instructions", Call{ToolName: "mcp", Input: map[string]any{"instructions": "repo-tools"}}, Block, CodeServer, "repo-tools"},
		{"proxy auth-start", Call{ToolName: "mcp", Input: map[string]any{"action": "auth-start", "server": "repo-tools"}}, Block, CodeServer, "repo-tools"},
		{"proxy install", Call{ToolName: "mcp", Input: map[string]any{"action": "install", "server": "x", "url": "https://x.example/mcp"}}, Block, CodeInstall, "x"},
		{"proxy search passes", Call{ToolName: "mcp", Input: map[string]any{"search": "echo"}}, Allow, CodeOK, ""},
		{"proxy status passes", Call{ToolName: "mcp", Input: map[string]any{}}, Allow, CodeOK, ""},
		{"proxy describe passes", Call{ToolName: "mcp", Input: map[string]any{"describe": "echo"}}, Allow, CodeOK, ""},
		{"proxy unknown server starts nothing", Call{ToolName: "mcp", Input: map[string]any{"tool": "x", "server": "nosuch"}}, Allow, CodeOK, ""},
		{"proxy disabled server", Call{ToolName: "mcp", Input: map[string]any{"tool": "x", "server": "off"}}, Block, CodeServer, "off"},
		{"proxy tool without server: cached original name", Call{ToolName: "mcp", Input: map[string]any{"tool": "secret_tool"}}, Block, CodeServer, "hidden"},
		{"proxy tool without server: prefixed name", Call{ToolName: "mcp", Input: map[string]any{"tool": "repo-tools_echo"}}, Block, CodeServer, "repo-tools"},
		{"proxy tool without server: approved prefix", Call{ToolName: "mcp", Input: map[string]any{"tool": "approved_echo"}}, Allow, CodeOK, ""},
		{"proxy tool without server: bare echo could be any", Call{ToolName: "mcp", Input: map[string]any{"tool": "echo"}}, Block, CodeServer, "repo-tools"},
		{"namespace proxy unapproved", Call{ToolName: "mcp__repo_tools", Input: map[string]any{"tool": "echo"}}, Block, CodeServer, "repo-tools"},
		{"namespace proxy approved", Call{ToolName: "mcp__approved", Input: map[string]any{"tool": "echo"}}, Allow, CodeOK, ""},
		{"direct tool, hyphen kept", Call{ToolName: "repo-tools_echo"}, Block, CodeServer, "repo-tools"},
		{"direct tool approved", Call{ToolName: "approved_echo"}, Allow, CodeOK, ""},
		{"direct tool of user's server", Call{ToolName: "mine_echo"}, Allow, CodeOK, ""},
		{"direct tool, dots and spaces escaped", Call{ToolName: "a_2e_b_20_c_echo"}, Block, CodeServer, "a.b c"},
		{"short prefixes collide: foo and foo-mcp", Call{ToolName: "foo_echo"}, Block, CodeAmbiguous, "foo-mcp"},
		{"mcpScript while a server is unapproved", Call{ToolName: "mcpScript", Input: map[string]any{"code": "tools.call('approved_echo')"}}, Block, CodeScript, ""},
		{"native tool passes", Call{ToolName: "read", Input: map[string]any{"path": "README.md"}}, Allow, CodeOK, ""},
		{"unmappable adapter tool", Call{ToolName: "weird", SourcePath: "/x/pi-mcp-adapter/index.ts"}, Block, CodeUnknownMCP, ""},
		{"other extension's tool", Call{ToolName: "weird", SourcePath: "/x/other/index.ts"}, Allow, CodeOK, ""},
		// Pi 1.6's built-in MCP client (issue 19): mcp__<server>__<tool>
		// with everything outside [A-Za-z0-9_] made '_'.
		{"built-in direct tool unapproved", Call{ToolName: "mcp__repo_tools__echo"}, Block, CodeServer, "repo-tools"},
		{"built-in direct tool approved", Call{ToolName: "mcp__approved__echo"}, Allow, CodeOK, ""},
		{"built-in tool of user's server", Call{ToolName: "mcp__mine__echo"}, Allow, CodeOK, ""},
		{"built-in tool, dots and spaces made _", Call{ToolName: "mcp__a_b_c__echo"}, Block, CodeServer, "a.b c"},
		{"built-in tool of a disabled server", Call{ToolName: "mcp__off__x"}, Block, CodeServer, "off"},
		{"built-in tool, hash suffix on a long name", Call{ToolName: "mcp__repo_tools__" + strings.Repeat("x", 38) + "_0123abcd"}, Block, CodeServer, "repo-tools"},
		{"built-in tool of no known server", Call{ToolName: "mcp__nosuch__echo"}, Block, CodeUnknownMCP, ""},
		{"built-in tool of no known server, long and hashed", Call{ToolName: "mcp__" + strings.Repeat("z", 50) + "_0123abcd"}, Block, CodeUnknownMCP, ""},
		{"built-in resource read, unapproved server", Call{ToolName: "read_mcp_resource", Input: map[string]any{"server": "repo-tools", "uri": "x://y"}}, Block, CodeServer, "repo-tools"},
		{"built-in resource read, approved server", Call{ToolName: "read_mcp_resource", Input: map[string]any{"server": "approved", "uri": "x://y"}}, Allow, CodeOK, ""},
		{"built-in resource list reaches every server", Call{ToolName: "list_mcp_resources", Input: map[string]any{}}, Block, CodeServer, ""},
		{"built-in template list, unapproved server", Call{ToolName: "list_mcp_resource_templates", Input: map[string]any{"server": "hidden"}}, Block, CodeServer, "hidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := s.Decide(tc.call)
			if d.Action != tc.action || d.Code != tc.code || (tc.server != "" && d.Server != tc.server) {
				t.Errorf("Decide = %+v, want action %s code %s server %q", d, tc.action, tc.code, tc.server)
			}
			if d.Action == Block && !strings.Contains(d.Reason, "piagent") {
				t.Errorf("block reason does not say who blocked: %q", d.Reason)
			}
			if d.Code == CodeServer && !strings.Contains(d.Reason, "piagent-mcp ") {
				t.Errorf("block reason names no fix: %q", d.Reason)
			}
		})
	}
}

func TestDecideMCPScriptAllApproved(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{"a": {entry: url("https://a.example"), repo: true, approved: true}, "mine": {entry: url("https://m.example")}})
	if d := NewSnapshot(g, Options{}).Decide(Call{ToolName: "mcpScript", Input: map[string]any{"code": "1"}}); d.Action != Allow {
		t.Errorf("mcpScript with every server approved: %+v", d)
	}
}

func TestDecidePrefixModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, tool string
		blocked    bool
	}{
		{"server", "repo-mcp_echo", true},
		{"short", "repo_echo", true},
		{"mcp", "mcp__repo-mcp_echo", true},
		{"server", "unrelated_echo", false},
	} {
		g := world(t, map[string]any{"toolPrefix": tc.mode}, map[string]spec{"repo-mcp": {entry: with(url("https://r.example"), "directTools", true), repo: true}})
		d := NewSnapshot(g, Options{}).Decide(Call{ToolName: tc.tool})
		if (d.Action == Block) != tc.blocked {
			t.Errorf("mode %s tool %s: %+v, want blocked=%v", tc.mode, tc.tool, d, tc.blocked)
		}
	}
}

func TestDecideEmptyAndStaleCache(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{"repo": {entry: with(url("https://r.example"), "directTools", true), repo: true}})
	stale := cache(map[string][]string{"repo": {"old"}})
	e := stale.Servers["repo"]
	e.CachedAt = time.Now().Add(-30 * 24 * time.Hour)
	stale.Servers["repo"] = e
	for name, c := range map[string]*mcpcache.Cache{"none": nil, "empty": cache(nil), "stale": stale} {
		d := NewSnapshot(g, Options{Cache: c}).Decide(Call{ToolName: "repo_new_tool"})
		if d.Action != Block {
			t.Errorf("%s cache: a prefixed direct tool passed: %+v", name, d)
		}
		d = NewSnapshot(g, Options{Cache: c}).Decide(Call{ToolName: "mcp", Input: map[string]any{"tool": "repo_x"}})
		if d.Action != Block {
			t.Errorf("%s cache: an unnamed proxy call passed: %+v", name, d)
		}
	}
}

func TestDecideFullBlock(t *testing.T) {
	t.Parallel()
	g := world(t, map[string]any{"toolPrefix": "none", "directTools": true}, map[string]spec{"repo": {entry: url("https://r.example"), repo: true}})
	if !g.FullBlock() {
		t.Fatal("expected a full block")
	}
	for _, tool := range []string{"read", "bash", "mcp", "anything"} {
		d := NewSnapshot(g, Options{}).Decide(Call{ToolName: tool, Input: map[string]any{"path": "x"}})
		if d.Action != Block || d.Code != CodeFullBlock || !strings.Contains(d.Reason, "toolPrefix") {
			t.Errorf("%s under a full block: %+v", tool, d)
		}
	}
}

func TestSelfProtection(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{"repo": {entry: url("https://r.example"), repo: true}})
	s := NewSnapshot(g, Options{Protected: []string{"/home/u/.pi/piagent-launch"}})
	store := filepath.Join(home, ".pi", "piagent-mcp-approvals.json")
	cases := []struct {
		name    string
		call    Call
		blocked bool
	}{
		{"bash approve", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp approve repo"}}, true},
		{"bash piagent mcp approve", Call{ToolName: "bash", Input: map[string]any{"command": "piagent mcp approve repo --yes"}}, true},
		{"bash path to the binary", Call{ToolName: "bash", Input: map[string]any{"command": "/usr/local/bin/piagent-mcp approve repo"}}, true},
		{"bash env prefix", Call{ToolName: "bash", Input: map[string]any{"command": "env A=1 piagent-mcp reject repo"}}, true},
		{"bash sudo", Call{ToolName: "bash", Input: map[string]any{"command": "sudo -E piagent-mcp reset"}}, true},
		{"bash sh -c", Call{ToolName: "bash", Input: map[string]any{"command": "sh -c 'piagent-mcp add x --url https://x.example'"}}, true},
		{"bash pipeline", Call{ToolName: "bash", Input: map[string]any{"command": "yes | piagent-mcp approve repo"}}, true},
		{"bash preset", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp --preset core --replace"}}, true},
		{"bash enable", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp enable repo"}}, true},
		{"bash disable", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp disable repo"}}, true},
		{"bash remove", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp remove repo"}}, true},
		{"bash setup", Call{ToolName: "bash", Input: map[string]any{"command": "piagent setup"}}, true},
		{"bash uninstall", Call{ToolName: "bash", Input: map[string]any{"command": "piagent uninstall --purge"}}, true},
		{"bash redirect into the store", Call{ToolName: "bash", Input: map[string]any{"command": "echo '{}' > ~/.pi/piagent-mcp-approvals.json"}}, true},
		{"bash tee into .mcp.json", Call{ToolName: "bash", Input: map[string]any{"command": "echo x | tee -a .mcp.json"}}, true},
		{"bash cp over Pi settings", Call{ToolName: "bash", Input: map[string]any{"command": "cp evil.json .pi/settings.json"}}, true},
		{"bash unparsable", Call{ToolName: "bash", Input: map[string]any{"command": "echo 'unterminated"}}, true},
		{"bash list allowed", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp list"}}, false},
		{"bash doctor allowed", Call{ToolName: "bash", Input: map[string]any{"command": "piagent-mcp doctor --json"}}, false},
		{"bash get allowed", Call{ToolName: "bash", Input: map[string]any{"command": "piagent mcp get repo"}}, false},
		{"bash quoted data allowed", Call{ToolName: "bash", Input: map[string]any{"command": "echo \"piagent-mcp approve repo\""}}, false},
		{"bash ordinary", Call{ToolName: "bash", Input: map[string]any{"command": "go test ./... > out.log"}}, false},
		{"write the store", Call{ToolName: "write", Input: map[string]any{"path": store, "content": "{}"}}, true},
		{"write .mcp.json relative", Call{ToolName: "write", Input: map[string]any{"path": ".mcp.json", "content": "{}"}}, true},
		{"edit .pi/mcp.json", Call{ToolName: "edit", Input: map[string]any{"path": "./.pi/mcp.json"}}, true},
		{"write ~/.pi/agent/settings.json", Call{ToolName: "write", Input: map[string]any{"path": "~/.pi/agent/settings.json"}}, true},
		{"write the extension's files", Call{ToolName: "write", Input: map[string]any{"path": "~/.pi/piagent/extension/0.1.0/index.ts"}}, true},
		{"write the launcher's config", Call{ToolName: "write", Input: map[string]any{"path": "/home/u/.pi/piagent-launch/x.json"}}, true},
		{"write an ordinary file", Call{ToolName: "write", Input: map[string]any{"path": "src/main.go"}}, false},
		{"read the store is fine", Call{ToolName: "read", Input: map[string]any{"path": store}}, false},
		{"an MCP tool naming the store", Call{ToolName: "mcp", Input: map[string]any{"tool": "fs_write", "server": "mine", "args": map[string]any{"path": store}}}, true},
		{"a custom tool naming .vscode/mcp.json (an import kind's file, whether or not imported)", Call{ToolName: "fs_write", Input: map[string]any{"target": "file:///home/u/proj/.vscode/mcp.json"}}, true},
		{"a custom tool naming an ordinary file URL", Call{ToolName: "fs_write", Input: map[string]any{"target": "file:///home/u/proj/src/mcp.go"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := s.Decide(tc.call)
			if got := d.Action == Block; got != tc.blocked {
				t.Errorf("Decide = %+v, want blocked=%v", d, tc.blocked)
			}
			if tc.blocked && d.Code != CodeSelf && d.Code != CodeShellParse {
				t.Errorf("code %s, want %s", d.Code, CodeSelf)
			}
		})
	}
}

func BenchmarkDecideNonMCP(b *testing.B) {
	g := world(b, nil, map[string]spec{
		"repo": {entry: with(url("https://r.example"), "directTools", true), repo: true},
		"mine": {entry: url("https://m.example")},
	})
	s := NewSnapshot(g, Options{Cache: cache(map[string][]string{"repo": {"echo"}})})
	call := Call{ToolName: "grep", Input: map[string]any{"pattern": "TODO", "path": "src"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := s.Decide(call); d.Action != Allow {
			b.Fatal(d)
		}
	}
}

func BenchmarkDecideProxy(b *testing.B) {
	g := world(b, nil, map[string]spec{"repo": {entry: url("https://r.example"), repo: true, approved: true}})
	s := NewSnapshot(g, Options{})
	call := Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "repo"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := s.Decide(call); d.Action != Allow {
			b.Fatal(d)
		}
	}
}

// The proxy decision with catalogue pins loaded: 50 tools pinned, one of
// them changed (issue 21: the cost at tool_call).
func BenchmarkDecideProxyPinned(b *testing.B) {
	g := world(b, nil, map[string]spec{"repo": {entry: url("https://r.example"), repo: true, approved: true}})
	seen := catalogue.Catalogue{Tools: map[string]string{}}
	for i := range 50 {
		seen.Tools[fmt.Sprintf("tool%d", i)] = fmt.Sprintf("sha256:%064d", i)
	}
	seen.Tools["echo"] = "sha256:e"
	st := &catalogue.State{Seen: seen, Diff: catalogue.Diff{Changed: []string{"tool7"}}}
	s := NewSnapshot(g, Options{Catalogues: map[string]*catalogue.State{"repo": st}})
	call := Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "repo"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := s.Decide(call); d.Action != Allow {
			b.Fatal(d)
		}
	}
}

// The built-in's resource lists pass when every server is usable.
func TestBuiltinResourceListAllApproved(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{
		"approved": {entry: url("https://a.example"), repo: true, approved: true},
		"mine":     {entry: url("https://m.example")},
	})
	s := NewSnapshot(g, Options{Cache: cache(nil)})
	for _, name := range []string{"list_mcp_resources", "list_mcp_resource_templates"} {
		if d := s.Decide(Call{ToolName: name, Input: map[string]any{}}); d.Action != Allow {
			t.Errorf("%s with every server usable: %+v", name, d)
		}
	}
}

// A changed tool is blocked on every surface that names it, with or
// without its server; the unchanged tool passes on each (issue 21).
func TestCatalogueSurfaces(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{"docs": {entry: with(url("https://d.example"), "directTools", true), repo: true, approved: true}})
	seen := catalogue.Catalogue{Tools: map[string]string{"echo": "sha256:2", "other": "sha256:3"}}
	st := &catalogue.State{Seen: seen, Diff: catalogue.Diff{Changed: []string{"echo"}}}
	s := NewSnapshot(g, Options{Cache: cache(map[string][]string{"docs": {"echo", "other"}}), Catalogues: map[string]*catalogue.State{"docs": st}})
	for _, tc := range []struct {
		call    Call
		blocked bool
	}{
		{Call{ToolName: "mcp", Input: map[string]any{"server": "docs", "tool": "echo"}}, true},
		{Call{ToolName: "mcp", Input: map[string]any{"server": "docs", "tool": "other"}}, false},
		{Call{ToolName: "mcp", Input: map[string]any{"tool": "docs_echo"}}, true},
		{Call{ToolName: "mcp", Input: map[string]any{"tool": "docs_other"}}, false},
		{Call{ToolName: "mcp__docs", Input: map[string]any{"tool": "echo"}}, true},
		{Call{ToolName: "docs_echo"}, true},
		{Call{ToolName: "docs_other"}, false},
		{Call{ToolName: "mcp__docs__echo"}, true},
		{Call{ToolName: "mcp__docs__other"}, false},
	} {
		d := s.Decide(tc.call)
		if (d.Action == Block) != tc.blocked || tc.blocked && (d.Code != CodeCatalogue || d.State != "tools-changed" || !strings.Contains(d.Reason, "approve docs --tools")) {
			t.Errorf("%s %v: %+v", tc.call.ToolName, tc.call.Input, d)
		}
	}
}

// Withholds (issue 39, item 1): the declarations of a changed tool, in
// every name the model may see it under, and of an unapproved server's
// tools are withheld; the unchanged tool, Pi's own tools, the proxy and
// the resource tools are not.
func TestWithholds(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{
		"docs": {entry: with(url("https://d.example"), "directTools", true), repo: true, approved: true},
		"new":  {entry: with(url("https://n.example"), "directTools", true), repo: true},
	})
	seen := catalogue.Catalogue{Tools: map[string]string{"echo": "sha256:2", "other": "sha256:3"}}
	st := &catalogue.State{Seen: seen, Diff: catalogue.Diff{Changed: []string{"echo"}}}
	s := NewSnapshot(g, Options{Cache: cache(map[string][]string{"docs": {"echo", "other"}, "new": {"x"}}), Catalogues: map[string]*catalogue.State{"docs": st}})
	for name, want := range map[string]bool{
		"docs_echo": true, "mcp__docs__echo": true, "new_x": true, "mcp__new__x": true,
		"docs_other": false, "mcp__docs__other": false,
		"read": false, "bash": false, "mcp": false, "mcpScript": false, "list_mcp_resources": false, "codemode": false,
	} {
		d, got := s.Withholds(name, "")
		if got != want || got && d.Server == "" {
			t.Errorf("Withholds(%s) = %v (%+v), want %v", name, got, d, want)
		}
	}
}

// A server whose instructions (or resources, prompts) changed since pinned
// (issue 39, item 2): its listing, its instructions, a connection and the
// built-in's resource read naming it are blocked; its unchanged tools pass.
func TestInstructionsChanged(t *testing.T) {
	t.Parallel()
	g := world(t, nil, map[string]spec{"docs": {entry: url("https://d.example"), repo: true, approved: true}})
	seen := catalogue.Catalogue{Tools: map[string]string{"echo": "sha256:2"}}
	for _, diff := range []catalogue.Diff{{Instructions: true}, {Resources: []string{"index docs://index"}}, {Prompts: []string{"p"}}} {
		st := &catalogue.State{Seen: seen, Diff: diff}
		s := NewSnapshot(g, Options{Catalogues: map[string]*catalogue.State{"docs": st}})
		for _, c := range []Call{
			{ToolName: "mcp", Input: map[string]any{"server": "docs"}},
			{ToolName: "mcp", Input: map[string]any{"instructions": "docs"}},
			{ToolName: "mcp", Input: map[string]any{"connect": "docs"}},
			{ToolName: "read_mcp_resource", Input: map[string]any{"server": "docs", "uri": "docs://index"}},
		} {
			if d := s.Decide(c); d.Action != Block || d.State != "offer-changed" || !strings.Contains(d.Reason, "approve docs --tools") {
				t.Errorf("%v, %s %v: %+v", diff, c.ToolName, c.Input, d)
			}
		}
		if d := s.Decide(Call{ToolName: "mcp", Input: map[string]any{"server": "docs", "tool": "echo"}}); d.Action != Allow {
			t.Errorf("%v: the unchanged echo: %+v", diff, d)
		}
	}
}

// TestDecisionSize: a Decision is copied on every call; at a size other
// than 128 bytes (a multiple of the copy's 16-byte step) the decision of a
// read costs a third more (see the field after Fix).
func TestDecisionSize(t *testing.T) {
	if n := unsafe.Sizeof(Decision{}); n != 128 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Errorf("a Decision is %d bytes; keep it at 128 (BenchmarkDecideNonMCP)", n)
	}
}
