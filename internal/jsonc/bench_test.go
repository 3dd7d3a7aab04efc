package jsonc

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseServers parses one layer's file of 125 servers, with a
// comment, as list --json at 1,000 servers reads each of its eight layers.
func BenchmarkParseServers(b *testing.B) {
	var w strings.Builder
	w.WriteString("{\n  // generated\n  \"mcpServers\": {\n")
	for i := range 125 {
		if i > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(&w, `"srv-%d": {"command": "node", "args": ["server-%d.js", "--port", "%d"], "env": {"TOKEN": "${TOKEN_%d}", "MODE": "fast"}}`, i, i, i, i)
	}
	w.WriteString("\n  }\n}")
	data := []byte(w.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
