package helper

import (
	"os"
	"path/filepath"
	"testing"
)

// The extension asks host once it loads: it steps Pi's built-in MCP client
// aside unless pi-mcp-adapter loads (issue 19, item 2).
func TestHostStepAside(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	agent := filepath.Join(home, ".pi", "agent")
	os.MkdirAll(agent, 0o755)
	adapter := filepath.Join(home, "adapter")
	os.MkdirAll(adapter, 0o755)
	os.WriteFile(filepath.Join(adapter, "package.json"), []byte(`{"name": "pi-mcp-adapter", "version": "2.36.0"}`), 0o644)
	settings := filepath.Join(agent, "settings.json")
	cases := []struct {
		name     string
		settings string // "" : no file
		argv     []string
		aside    bool
	}{
		{"no settings", "", nil, true},
		{"no packages", `{}`, nil, true},
		{"adapter from npm", `{"packages": ["npm:pi-mcp-adapter@2.36.0"]}`, nil, false},
		{"adapter as a local folder", `{"packages": ["` + adapter + `"]}`, nil, false},
		{"other packages only", `{"packages": ["npm:something-else@1.0.0"]}`, nil, true},
		{"adapter listed but --no-extensions", `{"packages": ["npm:pi-mcp-adapter@2.36.0"]}`, []string{"--no-extensions"}, true},
		{"adapter by -e", `{}`, []string{"-e", adapter}, false},
		{"settings unreadable as JSON", `{"packages": [`, nil, true},
	}
	for _, tc := range cases {
		if tc.settings == "" {
			os.Remove(settings)
		} else {
			os.WriteFile(settings, []byte(tc.settings), 0o644)
		}
		c := start(t, home, cwd)
		r := c.call("host", map[string]any{"argv": tc.argv})
		res, _ := r["result"].(map[string]any)
		if res == nil {
			t.Fatalf("%s: %v", tc.name, r)
		}
		if res["stepAside"] != tc.aside || res["adapterLoads"] == tc.aside || res["why"] == "" {
			t.Errorf("%s: %v, want stepAside %v", tc.name, res, tc.aside)
		}
	}
}

// A server's result loses what it hides from a person before the model
// reads it; a file's content read with read keeps every character.
func TestRedactStripsConcealedFromMCPResults(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	c := start(t, home, cwd)
	hidden := "ok\U000E0041\U000E0042 then\u200b\u202e done"
	r := c.call("redact", map[string]any{"toolName": "mcp", "input": map[string]any{}, "content": []any{map[string]any{"type": "text", "text": hidden}}})
	res := r["result"].(map[string]any)
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if text != "ok then done\n[piagent removed 4 hidden characters from this result]" {
		t.Errorf("mcp result: %q", text)
	}
	r = c.call("redact", map[string]any{"toolName": "read", "input": map[string]any{"path": "x"}, "content": []any{map[string]any{"type": "text", "text": hidden}}})
	text = r["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if text != hidden {
		t.Errorf("read result changed: %q", text)
	}
}
