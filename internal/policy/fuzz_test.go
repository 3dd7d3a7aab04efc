package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzExtract: every decision is well formed; and the oracle: the mcp
// proxy takes a tool's args as a JSON object or as a string holding one
// (the adapter parses it), so the string may be judged more strictly than
// the parsed form (its text is read as content too), never less: a model
// cannot loosen a decision by quoting its arguments.
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
		var args map[string]any
		if json.Unmarshal([]byte(input), &args) == nil && args != nil {
			asString := p.Decide(Call{ToolName: "mcp", Input: map[string]any{"tool": tool, "args": input}}, testFacts())
			parsed := p.Decide(Call{ToolName: "mcp", Input: map[string]any{"tool": tool, "args": args}}, testFacts())
			if strictness(asString.Action) < strictness(parsed.Action) {
				t.Fatalf("mcp args %s: as a string %s (%s), parsed %s (%s)", input, asString.Action, asString.Code, parsed.Action, parsed.Code)
			}
		}
		out, _ := p.Redact(c, input, testFacts())
		if strings.Count(out, "\n") > strings.Count(input, "\n") {
			t.Fatalf("Redact added lines: %q → %q", input, out)
		}
		_ = variants(input, "read")
	})
}

// strictness orders the actions: allow and warn let the call run, confirm
// asks a person, block stops it.
func strictness(action string) int {
	switch action {
	case ActionAllow, ActionWarn:
		return 0
	case ActionConfirm:
		return 1
	}
	return 2
}
