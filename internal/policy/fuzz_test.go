package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzExtract(f *testing.F) {
	seeds := []struct{ tool, input string }{
		{"read", `{"path": ".env"}`},
		{"read", `{"path": "file:///home/u/.ssh/id_rsa"}`},
		{"read", `{"path": "%2e%65nv%zz"}`},
		{"grep", `{"pattern": "x", "glob": "{.env,*.ts}", "path": "~"}`},
		{"find", `{"pattern": "[!a]env*", "path": "../.."}`},
		{"mcp", `{"tool": "t", "args": "{\"path\": [\"a\", {\"b\": \"auth.json\"}]}"}`},
		{"edit", `{"path": "a.md", "edits": [{"oldText": ".env", "newText": "x"}]}`},
		{"custom", `{"a": {"a": {"a": [[[["~/.aws/credentials"]]]]}}}`},
		{"write", `{"path": "keys/new", "content": "x"}`},
		{"ls", `{"path": "\\\\server\\share\\.git"}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.input)
	}
	p := mustMerge(f, "", "")
	f.Fuzz(func(t *testing.T, tool, input string) {
		var in map[string]any
		if json.Unmarshal([]byte(input), &in) != nil {
			in = map[string]any{"path": input, "x": []any{input, map[string]any{input: input}}}
		}
		c := Call{ToolName: tool, Input: in}
		d := p.Decide(c, testFacts())
		switch d.Action {
		case ActionAllow, ActionBlock, ActionConfirm, ActionWarn:
		default:
			t.Fatalf("action %q", d.Action)
		}
		if d.Code == "" {
			t.Fatalf("no code: %+v", d)
		}
		if d.Action == ActionBlock && d.Reason == "" {
			t.Fatalf("block without a reason: %+v", d)
		}
		out, _ := p.Redact(c, input, testFacts())
		if strings.Count(out, "\n") > strings.Count(input, "\n") {
			t.Fatalf("Redact added lines: %q → %q", input, out)
		}
		_ = variants(input, "read")
	})
}
