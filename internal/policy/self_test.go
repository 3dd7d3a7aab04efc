package policy

import (
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/imports"
	"github.com/piagent/piagent/internal/registry"
)

// TestSelfReadsTheWalk: for a tool other than Pi's, the gate's
// self-protection reads every string of the one walk the policy reads too —
// nested, inside a JSON string, in content fields, in the proxy's search —
// but not a string with a line break (content) nor an object's key, and it
// stops an input too deep to inspect.
func TestSelfReadsTheWalk(t *testing.T) {
	g := &Guarded{Home: "/home/u", Cwd: "/home/u/p", Reg: registry.NewSet([]registry.Entry{
		{Path: "/home/u/.pi/agent/settings.json"}, {Path: "/home/u/p/.pi", Dir: true}, {Path: "/home/u/.pi/piagent-mcp-approvals.json"},
	})}
	for _, tc := range []struct {
		tool  string
		input map[string]any
		stop  bool
	}{
		{"fs_write", map[string]any{"path": "src/x.go"}, false},
		{"fs_write", map[string]any{"target": ".pi/extensions/x.ts"}, true},
		{"fs_write", map[string]any{"args": map[string]any{"dest": "~/.pi/agent/settings.json"}}, true},
		{"fs_write", map[string]any{"args": `{"dest": "~/.pi/agent/settings.json"}`}, true}, // a JSON string, decoded
		{"fs_write", map[string]any{"content": "~/.pi/piagent-mcp-approvals.json"}, true},   // content fields count for self
		{"fs_write", map[string]any{"message": `{"to": "/home/u/p/.pi/settings.json"}`}, false},
		{"fs_write", map[string]any{"list": []any{"a", map[string]any{"deeper": []any{"/home/u/p/.pi/mcp.json"}}}}, true},
		{"fs_write", map[string]any{"text": "line one\n/home/u/p/.pi/x"}, false},             // a line break: content
		{"fs_write", map[string]any{"files": map[string]any{"/home/u/p/.pi/x": "a"}}, false}, // a key is not read
		{"fs_write", map[string]any{"deep": nest(33, "x.txt")}, true},
		{"fs_write", map[string]any{"deep": nest(30, "/home/u/p/.pi/x")}, true},
		{"fs_write", map[string]any{"command": "echo hi", "path": "README.md"}, false},
		{"fs_write", map[string]any{"command": "cp x /home/u/p/.pi/settings.json"}, true},
		{"mcp", map[string]any{"search": "~/.pi/agent/settings.json"}, true},
		{"mcp", map[string]any{"tool": "echo", "server": "repo"}, false},
		{"read", map[string]any{"path": "/home/u/p/.pi/settings.json"}, false}, // reading is fine
	} {
		in := Inspect(Call{ToolName: tc.tool, Input: tc.input})
		if d, stop := in.Self(g); stop != tc.stop {
			t.Errorf("%s %v: stop=%v (%+v), want %v", tc.tool, tc.input, stop, d, tc.stop)
		}
	}
}

// TestSuspiciousNamesEveryImportFile: a bash write into a folder not known
// before the line runs ($D) is stopped when it names any import kind's file
// (imports.Files, the registry's list), wherever that file lives; a write to
// an ordinary file there is not.
func TestSuspiciousNamesEveryImportFile(t *testing.T) {
	g := &Guarded{Home: "/home/u", Cwd: "/home/u/p", Reg: registry.NewSet(nil)}
	stop := func(target string) bool {
		in := Inspect(Call{ToolName: "bash", Input: map[string]any{"command": "echo x > " + target}})
		_, stop := in.Self(g)
		return stop
	}
	for _, f := range imports.Files("/h", "/p") {
		for _, target := range []string{`"$D` + f + `"`, `"$D` + strings.TrimPrefix(f, "/h") + `"`} {
			if !stop(target) {
				t.Errorf("a write to %s is not suspicious", target)
			}
		}
	}
	if stop(`"$D/src/notes.txt"`) {
		t.Error("the control: a write to $D/src/notes.txt is stopped")
	}
}
