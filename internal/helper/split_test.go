package helper

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSplitRequest holds the one-pass reading of the extension's lines to
// encoding/json's: whatever splitRequest accepts, encoding/json reads as
// the same id, method and params.
func FuzzSplitRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"decide","params":{"toolName":"bash","input":{"command":"ls"}}}`,
		`{"id":12,"method":"state","params":null}`,
		`{"id":3,"method":"check","params": {"toolName":"read","input":{"path":"a"}} }`,
		`{"id":1,"method":"decide","params":{}}}`,
		`{"id":1,"method":"decide","params":1,"params":2}`,
		`{"id":01,"method":"decide","params":{}}`,
		`{"id":1,"method":"Decide","params":{}}`,
		`{"id":1,"method":"decide","params":{"a":"}"}}`,
		`{"id":1,"method":"decide","params":"\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := splitRequest(line)
		if !ok {
			return
		}
		var want request
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("split %q, which encoding/json refuses: %v", line, err)
		}
		if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method {
			t.Fatalf("%q: split id %s method %q, encoding/json id %s method %q", line, got.ID, got.Method, want.ID, want.Method)
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, got.Params); err != nil {
			t.Fatalf("%q: split params %q do not compact: %v", line, got.Params, err)
		}
		json.Compact(&b, want.Params)
		if a.String() != b.String() {
			t.Fatalf("%q: split params %s, encoding/json %s", line, a.String(), b.String())
		}
	})
}

// TestSplitRequestTakesTheExtensionsLines: the lines the extension writes
// take the one-pass reading; anything else falls back.
func TestSplitRequestTakesTheExtensionsLines(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"id":7,"method":"decide","params":{"toolName":"read","input":{"path":"x"}}}`, true},
		{`{"id":7,"method":"ping","params":{}}`, true},
		{`{"method":"decide","id":7,"params":{}}`, false},
		{`{"id":"7","method":"decide","params":{}}`, false},
		{`{"id":7,"method":"decide","params":{}} `, false},
		{`{"id":7,"method":"decide","params":{},"x":1}`, false},
	} {
		if _, ok := splitRequest([]byte(c.line)); ok != c.ok {
			t.Errorf("%s: split %v, want %v", c.line, ok, c.ok)
		}
	}
}
