package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegistryAdvisoryWarnsOncePerToolPerSession(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	f := testFacts()
	var seq []string
	for _, tool := range []string{"context7_query", "context7_query", "figma_get", "context7_query", "read"} {
		c := call(tool, "library", "react")
		if tool == "read" {
			c = call("read", "path", "a.go")
		}
		d := p.Decide(c, f)
		seq = append(seq, d.Action)
	}
	want := []string{ActionWarn, ActionAllow, ActionWarn, ActionAllow, ActionAllow}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	// A new session warns again.
	f.Session = NewSessionState()
	if d := p.Decide(call("context7_query"), f); d.Action != ActionWarn {
		t.Errorf("new session: %s, want warn", d.Action)
	}
	// A nil session remembers nothing.
	f.Session = nil
	for range 2 {
		if d := p.Decide(call("context7_query"), f); d.Action != ActionWarn {
			t.Errorf("nil session: %s, want warn", d.Action)
		}
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	enforce := `{"version": 1, "registryMode": "enforce"}`
	trusted := `{"version": 1, "registryMode": "enforce", "permissionProfile": "trusted-full-access"}`
	registered := `{"version": 1, "registryMode": "enforce", "toolCapabilities": {"context7_query": ["filesystem-readonly"]}}`
	reserved := `{"version": 1, "registryMode": "enforce", "alwaysAllowedTools": ["piagent_evil"]}`
	tests := []struct {
		name, user, project string
		call                Call
		want                got
		reasonHas           string
	}{
		{"advisory unregistered warns", "", "", call("custom"), got{ActionWarn, CodeUnregistered, ""}, "once per tool per session"},
		{"advisory mcp proxy runs quietly (the MCP gate judges it)", "", "", call("mcp", "search", "x"), got{ActionAllow, CodeAllowed, ""}, ""},
		{"advisory mcp namespace proxy warns", "", "", call("mcp__github", "search", "x"), got{ActionWarn, CodeUnregistered, ""}, ""},
		{"enforce blocks unregistered", enforce, "", call("custom"), got{ActionBlock, CodeUnregistered, ""}, "toolCapabilities"},
		{"enforce blocks mcp", enforce, "", call("mcp", "tool", "x"), got{ActionBlock, CodeUnregistered, ""}, "mcpCapabilities does not change that"},
		{"enforce blocks mcp namespace proxy", enforce, "", call("mcp__github", "tool", "x"), got{ActionBlock, CodeUnregistered, ""}, "mcpCapabilities"},
		{"enforce allows builtin", enforce, "", call("read", "path", "a.go"), got{ActionAllow, CodeAllowed, ""}, ""},
		{"enforce allows our tool", enforce, "", call("piagent_tool_policy_check"), got{ActionAllow, CodeAllowed, ""}, ""},
		{"enforce blocks piagent_ impostor", enforce, "", call("piagent_context_dump"), got{ActionBlock, CodeUnregistered, ""}, "no privilege"},
		{"user cannot register piagent_ names", reserved, "", call("piagent_evil"), got{ActionBlock, CodeUnregistered, ""}, ""},
		{"enforce allows registered", registered, "", call("context7_query"), got{ActionAllow, CodeAllowed, ""}, ""},
		{"trusted-full-access lets mcp run", trusted, "", call("mcp", "tool", "x", "args", map[string]any{"q": "y"}), got{ActionWarn, CodeUnregistered, ""}, ""},
		{"trusted-full-access keeps protected paths", trusted, "", call("mcp", "tool", "x", "args", map[string]any{"path": ".env"}), got{ActionBlock, CodeProtectedPath, ".env*"}, ""},
		{"advisory keeps protected paths", "", "", call("custom", "file", "~/.ssh/id_ed25519"), got{ActionBlock, CodeProtectedPath, "~/.ssh/**"}, ""},
		{"project raises to enforce", "", `{"version": 1, "registryMode": "enforce"}`, call("custom"), got{ActionBlock, CodeUnregistered, ""}, ""},
		{"project cannot lower to advisory", enforce, `{"version": 1, "registryMode": "advisory"}`, call("custom"), got{ActionBlock, CodeUnregistered, ""}, ""},
		{"project cannot choose trusted-full-access", enforce, `{"version": 1, "permissionProfile": "trusted-full-access"}`, call("mcp", "tool", "x"), got{ActionBlock, CodeUnregistered, ""}, ""},
		{"project cannot register tools", enforce, `{"version": 1, "toolCapabilities": {"custom": ["shell"]}, "alwaysAllowedTools": ["other"]}`, call("custom"), got{ActionBlock, CodeUnregistered, ""}, ""},
		{"project standard profile tightens trusted", trusted, `{"version": 1, "permissionProfile": "standard"}`, call("mcp", "tool", "x"), got{ActionBlock, CodeUnregistered, ""}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := mustMerge(t, tc.user, tc.project)
			d := p.Decide(tc.call, testFacts())
			if diff := cmp.Diff(tc.want, got{d.Action, d.Code, d.Rule}); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not mention %q", d.Reason, tc.reasonHas)
			}
		})
	}
}

func TestSearchChannels(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	allow := got{ActionAllow, CodeAllowed, ""}
	search := func(rule string) got { return got{ActionBlock, CodeSearchProtected, rule} }
	tests := []struct {
		name string
		call Call
		want got
	}{
		{"grep glob .env*", call("grep", "pattern", "KEY", "glob", ".env*"), search(".env*")},
		{"grep glob .ENV case", call("grep", "pattern", "KEY", "glob", "**/.ENV"), search(".env*")},
		{"grep glob auth.json", call("grep", "pattern", "token", "glob", "auth.json"), search("auth.json")},
		{"grep glob state", call("grep", "pattern", "x", "glob", ".pi/piagent-state/**"), search(".pi/piagent-state/**")},
		{"grep glob profile", call("grep", "pattern", "x", "glob", "piagent-profile.json"), search("piagent-profile.json")},
		{"grep glob braces", call("grep", "pattern", "x", "glob", "{src/*.ts,.env}"), search(".env*")},
		{"grep glob class trick", call("grep", "pattern", "x", "glob", "[.]env"), search(".env*")},
		{"grep glob ?env trick", call("grep", "pattern", "x", "glob", "?env.local"), search(".env*")},
		{"grep glob *.pem", call("grep", "pattern", "x", "glob", "*.pem"), search("*.pem")},
		{"grep glob *.json broad", call("grep", "pattern", "x", "glob", "*.json"), allow},
		{"grep glob **/* broad", call("grep", "pattern", "x", "glob", "**/*"), allow},
		{"grep glob *.ts near miss", call("grep", "pattern", "x", "glob", "*.ts"), allow},
		{"grep glob .env.example allowed", call("grep", "pattern", "x", "glob", ".env.example"), allow},
		{"find pattern .env", call("find", "pattern", ".env"), search(".env*")},
		{"find pattern id_rsa*", call("find", "pattern", "id_rsa*"), search("id_rsa*")},
		{"find pattern .git/**", call("find", "pattern", ".git/**"), search(".git/**")},
		{"find pattern *.json broad", call("find", "pattern", "*.json"), allow},
		{"find pattern * broad", call("find", "pattern", "*"), allow},
		{"find pattern src/**/*.go near miss", call("find", "pattern", "src/**/*.go"), allow},
		{"find under home .ssh", call("find", "pattern", ".ssh/*", "path", "~"), search("~/.ssh/**")},
		{"find path protected", call("find", "pattern", "*", "path", "~/.ssh"), got{ActionBlock, CodeProtectedPath, "~/.ssh/**"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := p.Decide(tc.call, testFacts())
			if diff := cmp.Diff(tc.want, got{d.Action, d.Code, d.Rule}); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
		})
	}
}

func TestModes(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, `{"version": 1, "toolCapabilities": {"memory_note": ["memory"], "memory_search": ["filesystem-readonly"]}}`, "")
	capped := mustMerge(t, "", `{"version": 1, "mode": "docsWrite"}`)
	tests := []struct {
		name string
		p    *Policy
		mode string
		call Call
		want got
	}{
		{"readOnly read", p, ModeReadOnly, call("read", "path", "a.go"), got{ActionAllow, CodeAllowed, ""}},
		{"readOnly grep", p, ModeReadOnly, call("grep", "pattern", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"readOnly write blocked", p, ModeReadOnly, call("write", "path", "a.go", "content", "x"), got{ActionBlock, CodeModeDenied, ModeReadOnly}},
		{"readOnly memory note blocked", p, ModeReadOnly, call("memory_note", "note", "x"), got{ActionBlock, CodeModeDenied, ModeReadOnly}},
		{"readOnly memory search ok", p, ModeReadOnly, call("memory_search", "query", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"readOnly mcp search ok", p, ModeReadOnly, call("mcp", "search", "github"), got{ActionAllow, CodeAllowed, ""}},
		{"readOnly mcp call blocked", p, ModeReadOnly, call("mcp", "tool", "create_issue"), got{ActionBlock, CodeModeDenied, ModeReadOnly}},
		{"memory memory note ok", p, ModeMemory, call("memory_note", "note", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"memory docs write blocked", p, ModeMemory, call("write", "path", "docs/a.md", "content", "x"), got{ActionBlock, CodeModeDenied, ModeMemory}},
		{"docsWrite docs ok", p, ModeDocsWrite, call("write", "path", "docs/guide/a.txt", "content", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"docsWrite md anywhere in project", p, ModeDocsWrite, call("edit", "path", "src/README.md", "edits", []any{}), got{ActionAllow, CodeAllowed, ""}},
		{"docsWrite plans ok", p, ModeDocsWrite, call("write", "path", "plans/q3.yaml", "content", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"docsWrite source blocked", p, ModeDocsWrite, call("write", "path", "src/docs.go", "content", "x"), got{ActionBlock, CodeModeDenied, ModeDocsWrite}},
		{"docsWrite nested docs dir is source", p, ModeDocsWrite, call("write", "path", "src/docs/x.go", "content", "x"), got{ActionBlock, CodeModeDenied, ModeDocsWrite}},
		{"docsWrite md outside project is source", p, ModeDocsWrite, call("write", "path", "/tmp/x.md", "content", "x"), got{ActionBlock, CodeModeDenied, ModeDocsWrite}},
		{"sourceWrite source ok", p, ModeSourceWrite, call("write", "path", "src/main.go", "content", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"default mode is sourceWrite", p, "", call("write", "path", "src/main.go", "content", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"sourceWrite mcp tool ok", p, ModeSourceWrite, call("mcp", "tool", "create_issue"), got{ActionAllow, CodeAllowed, ""}},
		{"unknown mode blocks", p, "yolo", call("read", "path", "a.go"), got{ActionBlock, CodeModeUnknown, ""}},
		{"project cap honoured", capped, ModeSourceWrite, call("write", "path", "src/main.go", "content", "x"), got{ActionBlock, CodeModeDenied, ModeDocsWrite}},
		{"project cap allows docs", capped, ModeShip, call("write", "path", "docs/a.md", "content", "x"), got{ActionAllow, CodeAllowed, ""}},
		{"project cap below person's stricter choice", capped, ModeReadOnly, call("write", "path", "docs/a.md", "content", "x"), got{ActionBlock, CodeModeDenied, ModeReadOnly}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := testFacts()
			f.Mode = tc.mode
			d := tc.p.Decide(tc.call, f)
			if diff := cmp.Diff(tc.want, got{d.Action, d.Code, d.Rule}); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
			if d.Code == CodeModeDenied && !strings.Contains(d.Reason, "mode") {
				t.Errorf("reason %q does not say how to change the mode", d.Reason)
			}
		})
	}
	d := p.Decide(call("write", "path", "a.go", "content", "x"), Facts{Home: testHome, Cwd: testProj, ProjectRoot: testProj, Mode: ModeReadOnly})
	if !strings.Contains(d.Reason, "/piagent-mode") || !strings.Contains(d.Reason, "piagent policy mode") {
		t.Errorf("reason %q does not name /piagent-mode and piagent policy mode", d.Reason)
	}
	d = capped.Decide(call("write", "path", "a.go", "content", "x"), testFacts())
	if !strings.Contains(d.Reason, ".pi/piagent-policy.json") {
		t.Errorf("capped reason %q does not name the project file", d.Reason)
	}
}

// The base policy's piagent_ tools are exactly the ones the extension
// registers, so policy show lists no tool this build does not have.
func TestOwnToolsAreTheExtensions(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "extensions", "pi", "policy.ts"))
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, m := range regexp.MustCompile(`export const [A-Z_]+ = "(piagent_[a-z_]+)"`).FindAllSubmatch(src, -1) {
		registered = append(registered, string(m[1]))
	}
	p := mustMerge(t, "", "")
	var own []string
	for name := range p.builtinTools {
		own = append(own, name)
	}
	slices.Sort(registered)
	slices.Sort(own)
	if len(registered) == 0 || !slices.Equal(registered, own) {
		t.Errorf("base policy's own tools %v, extension registers %v", own, registered)
	}
}
