package helper

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestMalformedRequestsAreBadParams sends every method its params with
// each member missing, null, of each wrong type and unknown, and params
// themselves absent, null or not an object: each answer is bad-params,
// and none is an allow (issue 40, item 6: decide without input allowed a
// write).
func TestMalformedRequestsAreBadParams(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	c := start(t, home, cwd)
	valid := map[string]map[string]any{
		"ping":   {},
		"state":  {},
		"decide": {"toolName": "write", "input": map[string]any{"path": "a.txt", "content": "x"}, "sourcePath": "/x/index.ts"},
		"check":  {"toolName": "write", "input": map[string]any{"path": "a.txt", "content": "x"}, "sourcePath": "/x/index.ts"},
		"mode":   {"set": "sourceWrite"},
		"broker": {"serverName": "repo", "originalToolName": "echo", "origin": "mcpScript"},
		"redact": {"toolName": "read", "input": map[string]any{"path": "a.txt"}, "content": []any{map[string]any{"type": "text", "text": "x"}}},
		"host":   {"argv": []any{"-p", "hi"}},
		"report": {"tools": []any{map[string]any{"name": "mcp__repo__echo"}}},
	}
	wrong := map[kind][]any{
		kString:  {5, map[string]any{}, true},
		kObject:  {"x", []any{}, 5},
		kStrings: {"x", map[string]any{}, []any{1}, []any{nil}},
		kObjects: {map[string]any{}, []any{1}, []any{nil}, []any{"x"}},
		kContent: {5, map[string]any{}, []any{1}, []any{nil}},
	}
	if len(shapes) != len(valid) {
		t.Fatalf("the table covers %v, the protocol has %v", slices.Sorted(maps.Keys(valid)), slices.Sorted(maps.Keys(shapes)))
	}
	id := 0
	ask := func(method string, params string, wantBad bool, what string) {
		t.Helper()
		// once as the extension writes a line, once by encoding/json
		for _, line := range []string{
			fmt.Sprintf(`{"id":%d,"method":%q,"params":%s}`, id+1, method, params),
			fmt.Sprintf(`{"params":%s,"method":%q,"id":"s%d"}`, params, method, id+1),
		} {
			id++
			if params == "" {
				line = fmt.Sprintf(`{"id":%d,"method":%q}`, id, method)
			}
			m := c.raw(line)
			if r, _ := m["result"].(map[string]any); wantBad && r != nil && r["action"] == "allow" {
				t.Errorf("%s %s: answered allow: %v", method, what, m)
			}
			e, _ := m["error"].(map[string]any)
			if wantBad && (e == nil || e["code"] != "bad-params") {
				t.Errorf("%s %s: %s\n  answered %v, want bad-params", method, what, line, m)
			}
			if !wantBad && e != nil && e["code"] == "bad-params" {
				t.Errorf("%s %s: %s\n  answered %v", method, what, line, m)
			}
		}
	}
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for method, shape := range shapes {
		hasRequired := slices.ContainsFunc(shape, func(m member) bool { return m.required })
		ask(method, enc(valid[method]), false, "valid")
		ask(method, "", hasRequired, "without params")
		ask(method, "null", hasRequired, "with null params")
		for _, p := range []string{`5`, `"x"`, `[]`, `[{}]`, `true`} {
			ask(method, p, true, "with params "+p)
		}
		extra := maps.Clone(valid[method])
		extra["unexpected"] = 1
		ask(method, enc(extra), true, "with an unknown member")
		for _, m := range shape {
			p := maps.Clone(valid[method])
			delete(p, m.name)
			ask(method, enc(p), m.required, "without "+m.name)
			p[m.name] = nil
			ask(method, enc(p), true, "with "+m.name+" null")
			for _, w := range wrong[m.kind] {
				p[m.name] = w
				ask(method, enc(p), true, fmt.Sprintf("with %s %s", m.name, enc(w)))
			}
			if m.kind == kString && m.required {
				p[m.name] = " "
				ask(method, enc(p), true, "with "+m.name+" empty")
			}
		}
	}
	// decide's own attack: a write with no input was allowed
	for _, line := range []string{
		`{"id":900,"method":"decide","params":{"toolName":"write"}}`,
		`{"id":901,"method":"decide","params":{"toolName":"write","input":null}}`,
		`{"id":902,"method":"decide","params":{"toolName":"mcp","input":null}}`,
	} {
		if m := c.raw(line); m["result"] != nil {
			t.Errorf("%s answered %v", line, m)
		}
	}
}
