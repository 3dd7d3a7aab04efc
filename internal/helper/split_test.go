package helper

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/guard"
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

// FuzzFastCall holds the reflection-free reading of decide's params to
// encoding/json's: whatever fastCall reads, encoding/json reads as the same
// call, and the extension's own shape takes the fast path.
func FuzzFastCall(f *testing.F) {
	for _, s := range []string{
		`{"toolName":"bash","input":{"command":"ls -la","timeout":30}}`,
		`{"toolName":"mcp","input":{"tool":"echo","server":"srv-0","args":{"a":[1,2.5,true,null]}},"sourcePath":"/x/index.ts"}`,
		`{"toolName":"read","input":{"path":"a"},"toolName":"write"}`,
		`{"ToolName":"read","input":{}}`, `{"toolName":null,"input":{}}`, `{"toolName":"read","input":null}`,
		`{"toolName":{},"toolName":""}`, `{"toolName":"read","input":{"n":1e400}}`, `{"toolName":"read","extra":1}`, `{"toolName":"r\u00e9ad\ud800"}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		fast, ok := fastCall(params)
		if !ok {
			return
		}
		var slow guard.Call
		if err := json.Unmarshal(params, &slow); err != nil {
			t.Fatalf("%q: fastCall reads what encoding/json refuses: %v", params, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", params, fast, slow)
		}
	})
}

func TestFastCallTakesTheExtensionsCalls(t *testing.T) {
	for _, s := range []string{
		`{"toolName":"bash","input":{"command":"cd src && go test ./... 2>&1 | grep -v '^ok' | head -n 50"}}`,
		`{"toolName":"mcp","input":{"tool":"echo","server":"srv-0"},"sourcePath":"/home/u/.pi/agent/npm/node_modules/pi-mcp-adapter/index.ts"}`,
		`{"toolName":"write","input":{"path":".env","content":"x\ny"}}`,
	} {
		if _, ok := fastCall([]byte(s)); !ok {
			t.Errorf("%s: not read by the fast path", s)
		}
	}
	for _, s := range []string{`{"ToolName":"read"}`, `{"toolName":"read","input":null}`, `{"toolName":"read","other":1}`, `{"toolName":"read"} // c`, `{"toolName":{},"toolName":""}`, `{"input":{"a":1,"a":2}}`} {
		if _, ok := fastCall([]byte(s)); ok {
			t.Errorf("%s: read by the fast path", s)
		}
	}
}

// FuzzAppendDecision: a decision's response written by hand is the one
// encoding/json writes, and a response it does not take is left to it.
func FuzzAppendDecision(f *testing.F) {
	f.Add([]byte("12"), "allow", "ok", "", "", "", "", "", "", "", "", "")
	f.Add([]byte("1"), "block", "protected-path", "a <reason> & \"more\"", "srv", "pending", "", "approve", "srv", "", "env-files", "\xff.env\u2028")
	f.Add([]byte("1"), "block", "full-block", "r", "", "", "make <it> \"so\"", "disable", "a b", "(\u2028note)", "", "")
	f.Add([]byte("1"), "block", "install", "r", "", "", "", "add", "", "", "", "")
	f.Add([]byte(`"x"`), "allow", "ok", "", "", "", "", "", "", "", "", "")
	f.Add([]byte("null"), "allow", "ok", "", "", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, id []byte, action, code, reason, server, state, fixText, fixSub, fixArgs, fixNote, rule, subject string) {
		if !json.Valid(id) {
			return // ids come from a request line encoding/json read
		}
		var fix *gate.Fix
		if fixText != "" || fixSub != "" || fixNote != "" {
			fix = &gate.Fix{Text: fixText, Note: fixNote}
		}
		if fixSub != "" {
			// two steps, the second without arguments: every shape of a step
			fix.Steps = []gate.Step{{Sub: fixSub, Args: fixArgs}, {Sub: fixSub}}
		}
		resp := response{ID: json.RawMessage(id), Result: guard.Decision{Action: action, Code: code, Reason: reason,
			Server: server, State: state, Fix: fix, Rule: rule, Subject: subject}}
		got, ok := appendDecision(nil, resp)
		if !ok {
			return
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("got  %s\nwant %s", got, want.Bytes())
		}
	})
}

func TestAppendDecisionTakesDecisions(t *testing.T) {
	if _, ok := appendDecision(nil, response{ID: json.RawMessage("7"), Result: guard.Decision{Action: "allow", Code: "ok"}}); !ok {
		t.Error("a decision to a numeric id is not written by hand")
	}
	for _, r := range []response{
		{ID: json.RawMessage(`"7"`), Result: guard.Decision{Action: "allow"}},
		{ID: json.RawMessage("7"), Result: map[string]any{"action": "allow"}},
		{ID: json.RawMessage("7"), Error: &Error{Code: "bad-params"}},
	} {
		if _, ok := appendDecision(nil, r); ok {
			t.Errorf("%+v: written by hand", r)
		}
	}
}
