package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEveryEntry names every entry List gives for one input, with its
// folder, secret and watch flags: deleting a registration, or turning a
// folder into a file, a secret into a readable file or a watched file into
// an unwatched one, fails here (issue 41, R2), without a golden file that
// -update could accept. An entry added later is not an error here; its own
// test says why it is there.
func TestEveryEntry(t *testing.T) {
	t.Parallel()
	in := Input{Home: "/h", AgentDir: "/h/.pi/agent", Project: "/p", ConfigDir: ".pi", TempDir: "/t",
		Consulted: []string{"/a/.mcp.json"}, Binaries: []string{"/usr/bin/piagent"}, Extra: []string{"/x/ext"}}
	type want struct {
		path               string
		dir, secret, watch bool
	}
	wants := []want{
		{"/a/.mcp.json", false, false, false},
		{"/h/.claude.json", false, false, false},
		{"/h/.claude/claude_desktop_config.json", false, false, false},
		{"/h/.claude/mcp.json", false, false, false},
		{"/h/.codeium/windsurf/mcp_config.json", false, false, false},
		{"/h/.codex/config.json", false, false, false},
		{"/h/.codex/config.toml", false, false, false},
		{"/h/.config/Claude/claude_desktop_config.json", false, false, false},
		{"/h/.config/mcp/mcp.json", false, false, false},
		{"/h/.config/opencode/opencode.json", false, false, false},
		{"/h/.cursor/mcp.json", false, false, false},
		{"/h/.pi/agent/agent-plugin-data", true, false, false},
		{"/h/.pi/agent/auth.json", false, true, false},
		{"/h/.pi/agent/extensions", true, false, false},
		{"/h/.pi/agent/git", true, false, false},
		{"/h/.pi/agent/mcp-cache.json", false, false, true},
		{"/h/.pi/agent/mcp-npx-cache.json", false, false, false},
		{"/h/.pi/agent/mcp-oauth", true, true, false},
		{"/h/.pi/agent/mcp-oauth-encrypted", true, true, false},
		{"/h/.pi/agent/mcp-onboarding.json", false, false, false},
		{"/h/.pi/agent/mcp.json", false, false, false},
		{"/h/.pi/agent/models.json", false, false, false},
		{"/h/.pi/agent/npm", true, false, false},
		{"/h/.pi/agent/settings.json", false, false, false},
		{"/h/.pi/agent/trust.json", false, false, false},
		{"/h/.pi/piagent", true, false, false},
		{"/h/.pi/piagent-catalogue-pins.json", false, false, true},
		{"/h/.pi/piagent-catalogue-pins.json.lock", false, false, false},
		{"/h/.pi/piagent-grants.json", false, false, false},
		{"/h/.pi/piagent-grants.json.lock", false, false, false},
		{"/h/.pi/piagent-locks", true, false, false},
		{"/h/.pi/piagent-mcp-approvals.json", false, true, false},
		{"/h/.pi/piagent-mcp-approvals.json.lock", false, false, false},
		{"/h/.pi/piagent-modes.json", false, false, true},
		{"/h/.pi/piagent-modes.json.lock", false, false, false},
		{"/h/.pi/piagent-policy.json", false, false, true},
		{"/h/.windsurf/mcp.json", false, false, false},
		{"/h/Library/Application Support/Claude/claude_desktop_config.json", false, false, false},
		{"/p/.git/commondir", false, false, false},
		{"/p/.git/config", false, false, false},
		{"/p/.git/hooks", true, false, false},
		{"/p/.git/info", true, false, false},
		{"/p/.git/worktrees", true, false, false},
		{"/p/.mcp.json", false, false, false},
		{"/p/.pi", true, false, false},
		{"/p/.pi/piagent-policy.json", false, false, true},
		{"/p/.vscode/mcp.json", false, false, false},
		{"/p/opencode.json", false, false, false},
		{"/t/jiti", true, false, false},
		{"/t/node-compile-cache", true, false, false},
		{"/tmp/jiti", true, false, false},
		{"/tmp/node-compile-cache", true, false, false},
		{"/usr/bin/piagent", false, false, false},
		{"/x/ext", true, false, false},
	}
	got := map[string]Entry{}
	for _, e := range List(in) {
		got[e.Path] = e
	}
	set := NewSet(List(in))
	for _, w := range wants {
		e, ok := got[w.path]
		if !ok {
			t.Errorf("%s is not registered", w.path)
			continue
		}
		if e.Dir != w.dir || e.Secret != w.secret || e.Watch != w.watch {
			t.Errorf("%s: dir %v secret %v watch %v, want %v %v %v", w.path, e.Dir, e.Secret, e.Watch, w.dir, w.secret, w.watch)
		}
		if e.What == "" || e.Owner == "" {
			t.Errorf("%s has no owner or description: %+v", w.path, e)
		}
		probe := w.path
		if w.dir {
			probe = filepath.Join(w.path, "x", "y")
		}
		if m, ok := set.Match(probe); !ok || m != w.path {
			t.Errorf("Match(%s) = %q, %v; want %s", probe, m, ok, w.path)
		}
	}
}

// TestMatchFoldsCase: on a case-folding file system (macOS's, Windows')
// /P/.GIT/HOOKS/x is the project's hook: a write there must match the
// registered folder, not only a registered file (issue 41, R1).
func TestMatchFoldsCase(t *testing.T) {
	t.Parallel()
	set := NewSet(List(Input{Home: "/h", AgentDir: "/h/.pi/agent", Project: "/p", ConfigDir: ".pi", TempDir: "/t"}))
	for _, tc := range []struct{ p, want string }{
		{"/p/.Git/Hooks/pre-commit", "/p/.git/hooks"},
		{"/p/.PI/extensions/x.ts", "/p/.pi"},
		{"/h/.pi/Agent/EXTENSIONS/a/index.ts", "/h/.pi/agent/extensions"},
		{"/h/.PI/PIAGENT/launch/x.json", "/h/.pi/piagent"},
		{"/h/.PI/AGENT/SETTINGS.JSON", "/h/.pi/agent/settings.json"},
		{"/h/.pi/Piagent-MCP-Approvals.json", "/h/.pi/piagent-mcp-approvals.json"},
	} {
		if got, ok := set.Match(tc.p); !ok || got != tc.want {
			t.Errorf("Match(%s) = %q, %v; want %s", tc.p, got, ok, tc.want)
		}
	}
	// The control: a path that differs by more than case is not a match.
	if got, ok := set.Match("/p/.gitx/hooks/pre-commit"); ok {
		t.Errorf("Match(/p/.gitx/hooks/pre-commit) = %q, want no match", got)
	}
}

// TestGitDirsFollowed: the folders a gitdir: file, a commondir and a
// submodule name are registered with their hooks and config, not only the
// project's own .git.
func TestGitDirsFollowed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	proj := filepath.Join(root, "p")
	real := filepath.Join(root, "real.git")
	common := filepath.Join(root, "common.git")
	sub := filepath.Join(real, "modules", "lib")
	for _, d := range []string{proj, real, common, sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(proj, ".git"):         "gitdir: " + real + "\n",
		filepath.Join(real, "commondir"):    "../common.git\n",
		filepath.Join(sub, "HEAD"):          "ref: refs/heads/main\n",
		filepath.Join(real, "modules", "x"): "not a folder",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set := NewSet(List(Input{Home: "/h", AgentDir: "/h/.pi/agent", Project: proj, TempDir: "/t"}))
	for _, g := range []string{filepath.Join(proj, ".git"), real, common, sub} {
		for _, p := range []string{filepath.Join(g, "hooks", "pre-commit"), filepath.Join(g, "config"), filepath.Join(g, "info", "attributes")} {
			if _, ok := set.Match(p); !ok {
				t.Errorf("%s is not registered", p)
			}
		}
	}
}
