package imports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree writes files under root: keys are slash paths, a value "DIR" makes a
// directory, a value starting with "->" makes a symlink to the rest (relative
// to root when it does not start with /).
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case body == "DIR":
			err := os.MkdirAll(p, 0o755)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(body, "->"):
			target := strings.TrimPrefix(body, "->")
			if !strings.HasPrefix(target, "/") {
				target = filepath.Join(root, filepath.FromSlash(target))
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		default:
			body = strings.ReplaceAll(body, "@/", root+"/")
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// view is a Result in short words, with the temp root shown as "@".
type view struct {
	Servers    []string
	Candidates []string
}

func short(root string, res Result) view {
	rel := func(p string) string { return strings.Replace(p, root, "@", 1) }
	var v view
	for _, s := range res.Servers {
		entry, err := json.Marshal(s.Entry)
		if err != nil {
			panic(err)
		}
		v.Servers = append(v.Servers, fmt.Sprintf("%s %s adapter=%v proj=%v %s", s.Name, rel(s.File), s.Adapter, s.InProject, entry))
	}
	for _, c := range res.Candidates {
		line := fmt.Sprintf("%s %s adapter=%v proj=%v", rel(c.Path), c.Status, c.Adapter, c.InProject)
		if c.Line != 0 || c.Column != 0 {
			line += fmt.Sprintf(" at %d:%d", c.Line, c.Column)
		}
		if c.Err != "" && c.Status != StatusUnreadable {
			line += " err"
		}
		v.Candidates = append(v.Candidates, line)
	}
	return v
}

type readCase struct {
	name  string
	kind  string
	files map[string]string // under the temp root; home is "h", the project "h/../p" i.e. "p"
	cwd   string            // relative to root; "p" when empty
	want  view
}

func runCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tree(t, root, map[string]string{"h": "DIR", "p": "DIR"})
			tree(t, root, tc.files)
			cwd := tc.cwd
			if cwd == "" {
				cwd = "p"
			}
			res := Read(tc.kind, filepath.Join(root, "h"), filepath.Join(root, cwd))
			if res.Kind != tc.kind {
				t.Errorf("Kind = %q", res.Kind)
			}
			if diff := cmp.Diff(tc.want, short(root, res)); diff != "" {
				t.Errorf("Read(%s) mismatch (-want +got):\n%s", tc.kind, diff)
			}
			// Every candidate path is consulted.
			seen := map[string]bool{}
			for _, p := range res.Consulted {
				if seen[p] {
					t.Errorf("consulted twice: %s", p)
				}
				seen[p] = true
			}
			for _, c := range res.Candidates {
				if !seen[c.Path] {
					t.Errorf("candidate %s not in Consulted", c.Path)
				}
			}
		})
	}
}

func TestUnknownKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"", "zed", "toString", "constructor", "Cursor"} {
		if got := Read(kind, t.TempDir(), t.TempDir()); !cmp.Equal(got, Result{}) {
			t.Errorf("Read(%q) = %+v, want empty", kind, got)
		}
		if Known(kind) {
			t.Errorf("Known(%q)", kind)
		}
	}
	for _, kind := range Kinds {
		if _, ok := readers[kind]; !ok || !Known(kind) {
			t.Errorf("kind %q has no reader", kind)
		}
	}
	if len(readers) != len(Kinds) {
		t.Errorf("%d readers for %d kinds", len(readers), len(Kinds))
	}
}

func TestCursor(t *testing.T) {
	t.Parallel()
	const c = "h/.cursor/mcp.json"
	runCases(t, []readCase{
		{name: "missing", kind: "cursor", want: view{Candidates: []string{"@/h/.cursor/mcp.json missing adapter=true proj=false"}}},
		{name: "mcpServers, non-objects dropped", kind: "cursor",
			files: map[string]string{c: `{"mcpServers": {"b": {"url": "https://b"}, "a": {"command": "x", "args": ["1"]}, "n": null, "s": "str", "l": [1]}, "mcp-servers": {"z": {}}}`},
			want: view{
				Servers: []string{
					`a @/h/.cursor/mcp.json adapter=true proj=false {"args":["1"],"command":"x"}`,
					`b @/h/.cursor/mcp.json adapter=true proj=false {"url":"https://b"}`,
				},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"},
			}},
		{name: "mcp-servers alias when mcpServers is missing", kind: "cursor",
			files: map[string]string{c: `{"mcp-servers": {"z": {"command": "z"}}}`},
			want: view{
				Servers:    []string{`z @/h/.cursor/mcp.json adapter=true proj=false {"command":"z"}`},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"},
			}},
		{name: "mcp-servers alias when mcpServers is null", kind: "cursor",
			files: map[string]string{c: `{"mcpServers": null, "mcp-servers": {"z": {"command": "z"}}}`},
			want: view{
				Servers:    []string{`z @/h/.cursor/mcp.json adapter=true proj=false {"command":"z"}`},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"},
			}},
		{name: "no alias when mcpServers is not an object", kind: "cursor",
			files: map[string]string{c: `{"mcpServers": [], "mcp-servers": {"z": {"command": "z"}}}`},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"}}},
		{name: "jsonc", kind: "cursor",
			files: map[string]string{c: "// c\n{\"mcpServers\": {/* x */ \"a\": {\"command\": \"a\",},},}\n"},
			want: view{
				Servers:    []string{`a @/h/.cursor/mcp.json adapter=true proj=false {"command":"a"}`},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"},
			}},
		{name: "broken", kind: "cursor",
			files: map[string]string{c: "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"a\"}\n}\n"},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json unreadable adapter=true proj=false at 3:21"}}},
		{name: "blank", kind: "cursor",
			files: map[string]string{c: "  // nothing\n/* here */\n"},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json blank adapter=true proj=false"}}},
		{name: "top-level array is loaded with no servers", kind: "cursor",
			files: map[string]string{c: `[{"mcpServers": {"a": {}}}]`},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=false"}}},
		{name: "directory", kind: "cursor",
			files: map[string]string{c: "DIR"},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json unreadable adapter=true proj=false"}}},
		{name: "broken symlink is missing", kind: "cursor",
			files: map[string]string{c: "->nowhere"},
			want:  view{Candidates: []string{"@/h/.cursor/mcp.json missing adapter=true proj=false"}}},
		{name: "symlink into the project is in the project", kind: "cursor",
			files: map[string]string{c: "->p/cursor.json", "p/cursor.json": `{"mcpServers": {"a": {"command": "a"}}}`},
			want: view{
				Servers:    []string{`a @/h/.cursor/mcp.json adapter=true proj=true {"command":"a"}`},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=true"},
			}},
		{name: "home inside the cwd", kind: "cursor", cwd: ".",
			files: map[string]string{c: `{"mcpServers": {"a": {"command": "a"}}}`},
			want: view{
				Servers:    []string{`a @/h/.cursor/mcp.json adapter=true proj=true {"command":"a"}`},
				Candidates: []string{"@/h/.cursor/mcp.json loaded adapter=true proj=true"},
			}},
	})
}

func TestClaudeDesktop(t *testing.T) {
	t.Parallel()
	const c = "h/Library/Application Support/Claude/claude_desktop_config.json"
	runCases(t, []readCase{
		{name: "mcpServers only", kind: "claude-desktop",
			files: map[string]string{c: `{"mcpServers": {"a": {"command": "a"}, "b": 1}, "mcp-servers": {"z": {}}}`},
			want: view{
				Servers:    []string{`a @/` + c + ` adapter=true proj=false {"command":"a"}`},
				Candidates: []string{"@/" + c + " loaded adapter=true proj=false"},
			}},
		{name: "no alias", kind: "claude-desktop",
			files: map[string]string{c: `{"mcp-servers": {"z": {"command": "z"}}}`},
			want:  view{Candidates: []string{"@/" + c + " loaded adapter=true proj=false"}}},
		{name: "linux path is not read", kind: "claude-desktop",
			files: map[string]string{"h/.config/Claude/claude_desktop_config.json": `{"mcpServers": {"a": {"command": "a"}}}`},
			want:  view{Candidates: []string{"@/" + c + " missing adapter=true proj=false"}}},
	})
}

func TestClaudeCode(t *testing.T) {
	t.Parallel()
	const (
		mcp     = "h/.claude/mcp.json"
		cj      = "h/.claude.json"
		desktop = "h/.claude/claude_desktop_config.json"
	)
	runCases(t, []readCase{
		{name: "all missing", kind: "claude-code", want: view{Candidates: []string{
			"@/h/.claude/mcp.json missing adapter=true proj=false",
			"@/h/.claude.json missing adapter=true proj=false",
			"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
		}}},
		{name: "first wins, later shadowed", kind: "claude-code",
			files: map[string]string{
				mcp:     `{"mcpServers": {"a": {"command": "first"}}}`,
				cj:      `{"mcpServers": {"a": {"command": "second"}, "b": {"command": "b"}}}`,
				desktop: `{"mcpServers": {"c": {"command": "c"}}}`,
			},
			want: view{
				Servers: []string{`a @/h/.claude/mcp.json adapter=true proj=false {"command":"first"}`},
				Candidates: []string{
					"@/h/.claude/mcp.json loaded adapter=true proj=false",
					"@/h/.claude.json shadowed adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json shadowed adapter=true proj=false",
				},
			}},
		{name: "broken first, second loaded", kind: "claude-code",
			files: map[string]string{
				mcp:     "{\"mcpServers\": }",
				desktop: `{"mcpServers": {"c": {"command": "c"}}}`,
			},
			want: view{
				Servers: []string{`c @/h/.claude/claude_desktop_config.json adapter=true proj=false {"command":"c"}`},
				Candidates: []string{
					"@/h/.claude/mcp.json unreadable adapter=true proj=false at 1:16",
					"@/h/.claude.json missing adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json loaded adapter=true proj=false",
				},
			}},
		{name: "blank first moves on", kind: "claude-code",
			files: map[string]string{mcp: "", cj: `{"mcpServers": {"b": {"command": "b"}}}`},
			want: view{
				Servers: []string{`b @/h/.claude.json adapter=true proj=false {"command":"b"}`},
				Candidates: []string{
					"@/h/.claude/mcp.json blank adapter=true proj=false",
					"@/h/.claude.json loaded adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
				},
			}},
		{name: "no mcp-servers alias", kind: "claude-code",
			files: map[string]string{cj: `{"mcp-servers": {"b": {"command": "b"}}}`},
			want: view{Candidates: []string{
				"@/h/.claude/mcp.json missing adapter=true proj=false",
				"@/h/.claude.json loaded adapter=true proj=false",
				"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
			}}},
		{name: "project-nested entries for the cwd only", kind: "claude-code",
			files: map[string]string{cj: `{"mcpServers": {"top": {"command": "t"}}, "projects": {
				"@/p": {"mcpServers": {"local": {"command": "l"}, "top": {"command": "t2"}, "bad": 3}},
				"@/other": {"mcpServers": {"elsewhere": {"command": "e"}}}}}`},
			want: view{
				Servers: []string{
					`top @/h/.claude.json adapter=true proj=false {"command":"t"}`,
					`local @/h/.claude.json adapter=false proj=false {"command":"l"}`,
					`top @/h/.claude.json adapter=false proj=false {"command":"t2"}`,
				},
				Candidates: []string{
					"@/h/.claude/mcp.json missing adapter=true proj=false",
					"@/h/.claude.json loaded adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
				},
			}},
		{name: "project-nested entries under the real path", kind: "claude-code", cwd: "link",
			files: map[string]string{"link": "->p", cj: `{"projects": {
				"@/link": {"mcpServers": {"bylink": {"command": "l"}}},
				"@/p": {"mcpServers": {"byreal": {"command": "r"}}}}}`},
			want: view{
				Servers: []string{
					`bylink @/h/.claude.json adapter=false proj=false {"command":"l"}`,
					`byreal @/h/.claude.json adapter=false proj=false {"command":"r"}`,
				},
				Candidates: []string{
					"@/h/.claude/mcp.json missing adapter=true proj=false",
					"@/h/.claude.json loaded adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
				},
			}},
		{name: "project-nested entries of a shadowed file", kind: "claude-code",
			files: map[string]string{
				mcp: `{"mcpServers": {"a": {"command": "a"}}}`,
				cj:  `{"mcpServers": {"b": {"command": "b"}}, "projects": {"@/p": {"mcpServers": {"local": {"command": "l"}}}}}`,
			},
			want: view{
				Servers: []string{
					`a @/h/.claude/mcp.json adapter=true proj=false {"command":"a"}`,
					`local @/h/.claude.json adapter=false proj=false {"command":"l"}`,
				},
				Candidates: []string{
					"@/h/.claude/mcp.json loaded adapter=true proj=false",
					"@/h/.claude.json shadowed adapter=true proj=false",
					"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
				},
			}},
		{name: "shadowed and broken", kind: "claude-code",
			files: map[string]string{mcp: `{}`, cj: "{\n\"projects\": {1}}"},
			want: view{Candidates: []string{
				"@/h/.claude/mcp.json loaded adapter=true proj=false",
				"@/h/.claude.json shadowed adapter=true proj=false at 2:14 err",
				"@/h/.claude/claude_desktop_config.json missing adapter=true proj=false",
			}}},
	})
}

func TestWindsurf(t *testing.T) {
	t.Parallel()
	const (
		adapter = "h/.windsurf/mcp.json"
		real    = "h/.codeium/windsurf/mcp_config.json"
	)
	runCases(t, []readCase{
		{name: "neither", kind: "windsurf", want: view{Candidates: []string{
			"@/h/.windsurf/mcp.json missing adapter=true proj=false",
			"@/h/.codeium/windsurf/mcp_config.json missing adapter=false proj=false",
		}}},
		{name: "both, same name kept apart", kind: "windsurf",
			files: map[string]string{
				adapter: `{"mcp-servers": {"a": {"command": "a"}}}`,
				real:    `{"mcpServers": {"a": {"command": "real"}, "r": {"serverUrl": "https://r", "headers": {"X": "1"}}, "u": {"serverUrl": "https://s", "url": "https://u"}}, "mcp-servers": {"z": {}}}`,
			},
			want: view{
				Servers: []string{
					`a @/h/.windsurf/mcp.json adapter=true proj=false {"command":"a"}`,
					`a @/h/.codeium/windsurf/mcp_config.json adapter=false proj=false {"command":"real"}`,
					`r @/h/.codeium/windsurf/mcp_config.json adapter=false proj=false {"headers":{"X":"1"},"url":"https://r"}`,
					`u @/h/.codeium/windsurf/mcp_config.json adapter=false proj=false {"serverUrl":"https://s","url":"https://u"}`,
				},
				Candidates: []string{
					"@/h/.windsurf/mcp.json loaded adapter=true proj=false",
					"@/h/.codeium/windsurf/mcp_config.json loaded adapter=false proj=false",
				},
			}},
		{name: "real path broken", kind: "windsurf",
			files: map[string]string{real: `{"mcpServers": {"a": {"command": "a"}}`},
			want: view{Candidates: []string{
				"@/h/.windsurf/mcp.json missing adapter=true proj=false",
				"@/h/.codeium/windsurf/mcp_config.json unreadable adapter=false proj=false at 1:39",
			}}},
	})
}

func TestVSCode(t *testing.T) {
	t.Parallel()
	const v = "p/.vscode/mcp.json"
	runCases(t, []readCase{
		{name: "missing", kind: "vscode", want: view{Candidates: []string{"@/p/.vscode/mcp.json missing adapter=true proj=true"}}},
		{name: "home .vscode is not read", kind: "vscode",
			files: map[string]string{"h/.vscode/mcp.json": `{"mcpServers": {"a": {"command": "a"}}}`},
			want:  view{Candidates: []string{"@/p/.vscode/mcp.json missing adapter=true proj=true"}}},
		{name: "mcpServers loaded, servers listed apart", kind: "vscode",
			files: map[string]string{v: `{
				// VS Code's own key
				"servers": {
					"same": {"type": "stdio", "command": "node", "args": ["s.js"], "env": {"K": "${env:K}"}},
					"web": {"type": "http", "url": "https://w", "headers": {"A": "b"}},
					"old": {"type": "sse", "url": "https://o"},
					"plain": {"command": "p"},
					"bad": "x",
				},
				"inputs": [],
				"mcpServers": {"same": {"command": "adapter"}},
			}`},
			want: view{
				Servers: []string{
					`same @/p/.vscode/mcp.json adapter=true proj=true {"command":"adapter"}`,
					`old @/p/.vscode/mcp.json adapter=false proj=true {"httpTransport":"sse","url":"https://o"}`,
					`plain @/p/.vscode/mcp.json adapter=false proj=true {"command":"p"}`,
					`same @/p/.vscode/mcp.json adapter=false proj=true {"args":["s.js"],"command":"node","env":{"K":"${env:K}"}}`,
					`web @/p/.vscode/mcp.json adapter=false proj=true {"headers":{"A":"b"},"url":"https://w"}`,
				},
				Candidates: []string{"@/p/.vscode/mcp.json loaded adapter=true proj=true"},
			}},
		{name: "mcp-servers alias", kind: "vscode",
			files: map[string]string{v: `{"mcp-servers": {"a": {"command": "a"}}}`},
			want: view{
				Servers:    []string{`a @/p/.vscode/mcp.json adapter=true proj=true {"command":"a"}`},
				Candidates: []string{"@/p/.vscode/mcp.json loaded adapter=true proj=true"},
			}},
		{name: "broken", kind: "vscode",
			files: map[string]string{v: "{\"servers\": {\"a\": {\"command\": 'a'}}}"},
			want:  view{Candidates: []string{"@/p/.vscode/mcp.json unreadable adapter=true proj=true at 1:31"}}},
		{name: "symlink out of the project is still in it", kind: "vscode",
			files: map[string]string{"p/.vscode/mcp.json": "->h/elsewhere.json", "h/elsewhere.json": `{"mcpServers": {"a": {"command": "a"}}}`},
			want: view{
				Servers:    []string{`a @/p/.vscode/mcp.json adapter=true proj=true {"command":"a"}`},
				Candidates: []string{"@/p/.vscode/mcp.json loaded adapter=true proj=true"},
			}},
		{name: "cwd through a symlink", kind: "vscode", cwd: "link",
			files: map[string]string{"link": "->p", v: `{"mcpServers": {"a": {"command": "a"}}}`},
			want: view{
				Servers:    []string{`a @/link/.vscode/mcp.json adapter=true proj=true {"command":"a"}`},
				Candidates: []string{"@/link/.vscode/mcp.json loaded adapter=true proj=true"},
			}},
	})
}
