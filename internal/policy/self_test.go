package policy

import (
	"testing"

	"github.com/piagent/piagent/internal/registry"
)

// TestSelfWalkAgrees: the gate's self-protection answers the same whether
// it reads the walk the policy keeps (Walk first, as the guard does with a
// policy) or looks at the input's strings without keeping them (the gate
// alone).
func TestSelfWalkAgrees(t *testing.T) {
	g := &Guarded{Home: "/home/u", Cwd: "/home/u/p", Reg: registry.NewSet([]registry.Entry{
		{Path: "/home/u/.pi/agent/settings.json"}, {Path: "/home/u/p/.pi", Dir: true}, {Path: "/home/u/.pi/piagent-mcp-approvals.json"},
	})}
	inputs := []map[string]any{
		{"path": "src/x.go"},
		{"target": ".pi/extensions/x.ts"},
		{"args": map[string]any{"dest": "~/.pi/agent/settings.json"}},
		{"args": `{"dest": "~/.pi/agent/settings.json"}`},    // a JSON string, decoded
		{"content": "~/.pi/piagent-mcp-approvals.json"},      // content fields count for self
		{"message": `{"to": "/home/u/p/.pi/settings.json"}`}, // content: not decoded
		{"list": []any{"a", map[string]any{"deeper": []any{"/home/u/p/.pi/mcp.json"}}}},
		{"text": "line one\n/home/u/p/.pi/x"}, // a line break: content
		{"deep": nest(33, "x.txt")},
		{"deep": nest(30, "/home/u/p/.pi/x")},
		{"command": "echo hi", "path": "README.md"},
	}
	for _, input := range inputs {
		c := Call{ToolName: "fs_write", Input: input}
		walked := Inspect(c)
		walked.Walk()
		d1, stop1 := walked.Self(g)
		fresh := Inspect(c)
		d2, stop2 := fresh.Self(g)
		if stop1 != stop2 || d1.Code != d2.Code || d1.Reason != d2.Reason {
			t.Errorf("%v: with the walk %v %+v, without %v %+v", input, stop1, d1, stop2, d2)
		}
	}
	// and the cases mean something: some stop, some do not
	stops := 0
	for _, input := range inputs {
		in := Inspect(Call{ToolName: "fs_write", Input: input})
		if _, stop := in.Self(g); stop {
			stops++
		}
	}
	if stops < 5 || stops == len(inputs) {
		t.Fatalf("%d of %d inputs stopped", stops, len(inputs))
	}
}
