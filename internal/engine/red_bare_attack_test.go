package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/guard"
)

// TestRedBareNameLinkToRegisteredFile: the self-protection skips a path
// with no slash, dot or ~ ("a bare word cannot name" a registered file),
// before it resolves links. A link in the project with such a name (made
// by the agent's sandboxed bash: ln -s in the project is allowed) leads
// Pi's write and edit tools, which follow links, to any registered file the
// protected-path patterns do not also cover: the user's MCP layer (a
// server there needs no approval), piagent's policy, the grants, Pi's
// settings and extensions, the project's .pi. The controls: the file
// itself, and the same link under a name with a dot, are blocked.
func TestRedBareNameLinkToRegisteredFile(t *testing.T) {
	home, proj := registryWorld(t)
	targets := map[string]string{
		"user MCP layer":  filepath.Join(home, ".config", "mcp", "mcp.json"),
		"piagent policy":  filepath.Join(home, ".pi", "piagent-policy.json"),
		"grants":          filepath.Join(home, ".pi", "piagent-grants.json"),
		"Pi settings":     filepath.Join(home, ".pi", "agent", "settings.json"),
		"Pi extension":    filepath.Join(home, ".pi", "agent", "extensions", "evil.ts"),
		"project .pi":     filepath.Join(proj, ".pi", "settings.json"),
		"project .mcp":    filepath.Join(proj, ".mcp.json"),
		"store (missing)": filepath.Join(home, ".pi", "piagent-mcp-approvals.json"),
	}
	os.MkdirAll(filepath.Join(home, ".pi", "agent", "extensions"), 0o755)
	for name, target := range targets {
		switch name {
		case "store (missing)", "Pi extension", "grants":
		case "piagent policy":
			os.WriteFile(target, []byte(`{"version": 1}`), 0o644)
		default:
			os.WriteFile(target, []byte("{}"), 0o644)
		}
	}
	for _, fresh := range []bool{false, true} {
		en := &Engine{Home: home, Cwd: proj}
		for name, target := range targets {
			t.Run(name, func(t *testing.T) {
				if fresh {
					en = &Engine{Home: home, Cwd: proj}
				}
				write := func(p string) guard.Decision {
					return en.Check(guard.Call{ToolName: "write", Input: map[string]any{"path": p, "content": "{}"}})
				}
				edit := func(p string) guard.Decision {
					return en.Check(guard.Call{ToolName: "edit", Input: map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "{}", "newText": "{ }"}}}})
				}
				if d := write("plain.txt"); !d.Allowed() {
					t.Fatalf("control: a write of a new project file blocked: %+v", d)
				}
				if d := write(target); d.Allowed() {
					t.Fatalf("control: a write of %s allowed", target)
				}
				dotted, bare := filepath.Join(proj, "dotted.json"), filepath.Join(proj, "bare")
				for _, l := range []string{dotted, bare} {
					os.Remove(l)
					if err := os.Symlink(target, l); err != nil {
						t.Fatal(err)
					}
					defer os.Remove(l)
				}
				if d := write("dotted.json"); d.Allowed() {
					t.Fatalf("control: a write through dotted.json, a link to %s, allowed", target)
				}
				if d := write("bare"); d.Allowed() {
					t.Errorf("write of bare, a link to %s, allowed", target)
				}
				if _, err := os.Stat(target); err == nil {
					if d := edit("bare"); d.Allowed() {
						t.Errorf("edit of bare, a link to %s, allowed", target)
					}
				}
			})
		}
	}
}
