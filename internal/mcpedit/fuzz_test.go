package mcpedit

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/jsonc"
)

// servers decodes a document's server map the way the adapter reads it.
func serversOf(t *testing.T, data []byte) map[string]any {
	t.Helper()
	v, blank, err := jsonc.Parse(bytes.Clone(data))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, data)
	}
	if blank {
		return map[string]any{}
	}
	root, _ := v.(map[string]any)
	s := root["mcpServers"]
	if s == nil {
		s = root["mcp-servers"]
	}
	m, _ := s.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func FuzzSetServer(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		if i := bytes.Index(data, []byte("-- before --\n")); i >= 0 {
			rest := data[i+len("-- before --\n"):]
			if j := bytes.Index(rest, []byte("\n-- ")); j >= 0 {
				rest = rest[:j+1]
			}
			f.Add(rest, "a", uint8(0))
			f.Add(rest, "zeta", uint8(1))
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x"}//c
}}`), "a", uint8(2))
	f.Add([]byte(`{"mcpServers":{"a":1,"b":{"disabled":true},},"x":[/*k*/]}`), "b", uint8(3))
	f.Add([]byte("{\"mcpServers\":{\"a\\u0062\":{}}}"), "ab", uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, name string, op uint8) {
		d, err := Parse("f", data)
		if err != nil || !utf8.ValidString(name) {
			return
		}
		before := serversOf(t, data)
		entry := map[string]any{"command": "npx", "args": []any{"-y", name}, "env": map[string]any{"K": "${K}"}}
		raw, _ := json.Marshal(entry)
		switch op % 4 {
		case 0:
			err = d.SetServer(name, raw)
		case 1:
			d.RemoveServer(name)
		case 2:
			err = d.SetDisabled(name, true)
		case 3:
			_, err = d.ClearDisabled(name)
		}
		if err != nil {
			return // a non-object entry is refused, never rewritten
		}
		out := d.Bytes()
		if _, err := Parse("out", out); err != nil {
			t.Fatalf("result does not re-parse: %v\nbefore:\n%s\nafter:\n%s", err, data, out)
		}
		after := serversOf(t, out)
		// Every other server is unchanged.
		b, a := maps.Clone(before), maps.Clone(after)
		delete(b, name)
		delete(a, name)
		if !reflect.DeepEqual(b, a) {
			t.Fatalf("other servers changed\nbefore:\n%s\nafter:\n%s", data, out)
		}
		got, ok := after[name]
		switch op % 4 {
		case 0:
			if !reflect.DeepEqual(got, entry) {
				t.Fatalf("entry = %v, want %v\n%s", got, entry, out)
			}
		case 1:
			if ok {
				t.Fatalf("%q still present\n%s", name, out)
			}
		case 2:
			if m, _ := got.(map[string]any); m == nil || m["disabled"] != true {
				t.Fatalf("%q not disabled: %v\n%s", name, got, out)
			}
		case 3:
			if m, _ := got.(map[string]any); m != nil {
				if _, has := m["disabled"]; has {
					t.Fatalf("%q still has disabled\n%s", name, out)
				}
			}
		}
	})
}
