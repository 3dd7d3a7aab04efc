package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/piagent/piagent/internal/digest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in        string
		want      any
		blank     bool
		line, col int
	}{
		{in: `{"a": 1}`, want: map[string]any{"a": 1.0}},
		{in: "{\n // c\n \"a\": [1, 2,], /* x */\n}", want: map[string]any{"a": []any{1.0, 2.0}}},
		{in: "", blank: true},
		{in: "  \n\t", blank: true},
		{in: "// only a comment\n/* and a block */", blank: true},
		{in: "[1]", want: []any{1.0}},
		{in: "{\n \"a\": 1,\n \"b\": }", line: 3, col: 7},
		{in: "{\"a\" 1}", line: 1, col: 6},
		{in: "/* unterminated", line: 1, col: 1},
		{in: "{\n\n  \"x\": tru }", line: 3, col: 8},
	}
	for _, tc := range cases {
		v, blank, err := Parse([]byte(tc.in))
		if tc.line > 0 {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line != tc.line || se.Column != tc.col {
				t.Errorf("Parse(%q) error %v, want line %d column %d", tc.in, err, tc.line, tc.col)
			}
			continue
		}
		if err != nil || blank != tc.blank {
			t.Errorf("Parse(%q) = blank %v err %v", tc.in, blank, err)
			continue
		}
		if diff := cmp.Diff(tc.want, v); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestParseKeepsInput: the caller's bytes keep their comments.
func TestParseKeepsInput(t *testing.T) {
	t.Parallel()
	in := []byte("{ // keep me\n \"a\": 1, }")
	orig := bytes.Clone(in)
	if _, _, err := Parse(in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, orig) {
		t.Errorf("Parse changed its input: %q", in)
	}
}

// TestParseOwnedReadsInPlace: a file that is valid UTF-8 is not copied
// before it is decoded (issue 46: that copy was 4.4% of a large gate's
// bytes): a string in the value lies in the caller's bytes. One that is
// not valid UTF-8 is decoded as Node decodes it, as Parse does.
func TestParseOwnedReadsInPlace(t *testing.T) {
	t.Parallel()
	data := []byte(`{"mcpServers": {"x": {"command": "node"}}} // c`)
	v, _, err := ParseOwned(data)
	if err != nil {
		t.Fatal(err)
	}
	s := v.(map[string]any)["mcpServers"].(map[string]any)["x"].(map[string]any)["command"].(string)
	at := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if lo := uintptr(unsafe.Pointer(&data[0])); at < lo || at >= lo+uintptr(len(data)) {
		t.Errorf("the value's string %q is a copy, not the file's bytes", s)
	}
	bad := []byte("{\"a\": \"\xff\xc3\"}")
	v, _, err = ParseOwned(bad)
	if want := map[string]any{"a": "\ufffd\ufffd"}; err != nil || !cmp.Equal(v, any(want)) {
		t.Errorf("ParseOwned(%q) = %#v, %v; want %#v", bad, v, err, want)
	}
}

// FuzzParse: the parse is stable; and the oracle: on every input that
// encoding/json also accepts (plain JSON, valid UTF-8), the two agree on
// the value. JSONC only adds comments and trailing commas; it must not
// read plain JSON differently.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "// c\n{}", "{,}", "[1,2,]", `"x"`, "/* */", `{"a":{"b":[1,"\u00e9",null,true]},"a":2}`, `"\ud83d\ude00 \u2028"`, `-0.5e-3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, b1, err1 := Parse(data)
		v2, b2, err2 := Parse(data)
		if (err1 == nil) != (err2 == nil) || b1 != b2 || !cmp.Equal(v1, v2) {
			t.Fatalf("unstable parse")
		}
		// ParseOwned, which reads a valid file where it lies, answers
		// as Parse does, error and position included
		v3, b3, err3 := ParseOwned(bytes.Clone(data))
		if fmt.Sprint(err3) != fmt.Sprint(err1) || b3 != b1 || !cmp.Equal(v3, v1) {
			t.Fatalf("ParseOwned(%q) = %#v, %v, %v; Parse gives %#v, %v, %v", data, v3, b3, err3, v1, b1, err1)
		}
		if !utf8.Valid(data) {
			return // replacement characters: jsonc follows the adapter's decoder (WHATWG), not Go's
		}
		var want any
		if json.Unmarshal(data, &want) != nil || err1 != nil || b1 {
			return
		}
		if !cmp.Equal(v1, want) {
			t.Fatalf("Parse(%q) = %#v; encoding/json reads %#v", data, v1, want)
		}
	})
}

// TestAdapterQuirks pins what the adapter's strip-json-comments and
// JSON.parse make of the places Go's own decoding differs (each answer was
// read from the adapter; the differential test in test/e2e re-checks them).
func TestAdapterQuirks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in    string
		want  any
		blank bool
		bad   bool
	}{
		{in: `{"a":1} // c`, want: map[string]any{"a": 1.0}},
		{in: `{,}`, want: map[string]any{}},
		{in: `[,]`, want: []any{}},
		{in: `[1,,]`, bad: true},
		{in: `[1, /* x */ ]`, want: []any{1.0}},
		// beyond float64: kept as written (JavaScript holds ±Infinity, which digest reads)
		{in: "[1e400, -1e400, 1e-400]", want: []any{json.Number("1e400"), json.Number("-1e400"), 0.0}},
		{in: "\ufeff{}", bad: true},
		{in: "\ufeff// only a comment", blank: true},
		{in: "\u00a0\u2028", blank: true},
		{in: `{"a":1,"a":2}`, want: map[string]any{"a": 2.0}},
		{in: "/* x", bad: true},
		{in: `{"a":"// no","b":"/* no */"}`, want: map[string]any{"a": "// no", "b": "/* no */"}},
		{in: `{"a":"\\"} // c`, want: map[string]any{"a": `\`}},
		{in: "{\"a\":\"x\xffy\xe2\x82z\"}", want: map[string]any{"a": "x\ufffdy\ufffdz"}},
		{in: "[1]\n// trailing\r\n", want: []any{1.0}},
		{in: "[1] x", bad: true},
	}
	for _, tc := range cases {
		v, blank, err := Parse([]byte(tc.in))
		switch {
		case tc.bad:
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", tc.in, v)
			}
		case err != nil || blank != tc.blank:
			t.Errorf("Parse(%q): blank %v, err %v", tc.in, blank, err)
		case !tc.blank && !cmp.Equal(tc.want, v):
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, v, tc.want)
		}
	}
}

func TestDecodeUTF8MaximalSubparts(t *testing.T) {
	t.Parallel()
	// WHATWG: one U+FFFD per maximal subpart of an ill-formed sequence.
	for in, want := range map[string]string{
		"\xe2\x82":     "\ufffd",
		"\xe0\x80":     "\ufffd\ufffd",
		"\xf0\x9f\x98": "\ufffd",
		"\xc0\xaf":     "\ufffd\ufffd",
		"\xed\xa0\x80": "\ufffd\ufffd\ufffd",
		"a\xffb":       "a\ufffdb",
	} {
		if got := DecodeUTF8([]byte(in)); got != want {
			t.Errorf("DecodeUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,],}`, "// c", "/* x", "[,]", "\ufeff{}", `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, blank, err := Parse(data)
		if blank && (v != nil || err != nil) {
			t.Fatalf("blank with a value or error")
		}
		if stripped := Strip(DecodeUTF8(data)); len(stripped) != len(DecodeUTF8(data)) {
			t.Fatalf("Strip changed the length: offsets would not carry over")
		}
	})
}

// slowDecode is Parse's encoding/json path alone.
func slowDecode(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return numbers(v), nil
}

// FuzzFastDecode: the one-pass decoder and Strip with encoding/json agree
// on every document the fast one accepts, and it accepts every one they do
// short of the depth limit.
func FuzzFastDecode(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "node", "args": ["x.js", "--port", "8080"], "env": {"T": "${T}"}}}}`,
		`[1, -0, 0.5, 1e400, -1e-400, 123456789012345678901234567890, true, false, null]`,
		`"\u00e9\ud83d\ude00\ud800\udc00x\ud800\\\"\/\b\f\n\r\t"`, `{"a":1,"a":2}`, ` { } `, `[]`, `01`, `1.`, `.5`, `-`, `"\u12"`,
		`"\ud800\u0041"`, `{"a" 1}`, `[1,]`, "\"a\x01\"", `tru`, `nul`, `"\uD83D"`, `1e`, `+1`, `"\u+123"`,
		"// c\n{\"a\": [1, /* x */ 2,\n// y\n],}", `[,]`, `{,}`, `[1,,]`, `[,1]`, `[1 /* x`, `{"a//": "/*"}`, `1 // end`,
		`{"a":1,/**/}`, "[1,// c\r\n]", `/`, `1/`, `[1 /*/ ]`, `"\\"//`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = DecodeUTF8([]byte(s))
		fast, ok := fastDecode(s)
		slow, err := slowDecode(Strip(s))
		switch {
		case ok && err != nil:
			t.Fatalf("%q: the fast path accepts what encoding/json refuses (%v)", s, err)
		case !ok && err == nil && depth(slow) < maxFastDepth:
			t.Fatalf("%q: the fast path refuses what encoding/json reads", s)
		case ok && !reflect.DeepEqual(fast, slow):
			t.Fatalf("%q: fast %#v, encoding/json %#v", s, fast, slow)
		}
	})
}

// FuzzDecodeJSON: the strict fast path and encoding/json.Unmarshal agree
// on every document the fast path accepts, and it accepts every one
// encoding/json does that is valid UTF-8, short of the depth limit, with no
// object naming a key twice.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"toolName":"bash","input":{"command":"ls -la","timeout":30}}`, `{"a":1,"a":2}`, `[1,]`, `[,]`, `{"a":1,}`,
		"// c\n1", `/* x */ 1`, `1e400`, `-1e400`, `1e-400`, `"\ud800"`, "\"\xff\"", `{"A":1,"a":2}`, ` [ ] `, `null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := DecodeJSON(s)
		var slow any
		err := json.Unmarshal([]byte(s), &slow)
		switch {
		case ok && err != nil:
			t.Fatalf("%q: the fast path accepts what encoding/json refuses (%v)", s, err)
		case !ok && err == nil && utf8.ValidString(s) && depth(slow) < maxFastDepth && !repeatsKey(s):
			t.Fatalf("%q: the fast path refuses what encoding/json reads", s)
		case ok && !reflect.DeepEqual(fast, slow):
			t.Fatalf("%q: fast %#v, encoding/json %#v", s, fast, slow)
		}
	})
}

// FuzzAppendString: AppendString writes what encoding/json writes with
// HTML escaping off.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"plain", "é\u2028\u2029", "\"q\" \\ <&>", "\x00\x1f\x7f", "\xff\xfe", "export T=…"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want.Bytes())
		}
	})
}

// repeatsKey reports whether an object in the JSON document s names a key
// twice, read by encoding/json's tokenizer.
func repeatsKey(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct {
		keys   map[string]bool
		expect bool // the next string token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			top := &stack[n-1]
			if k, isKey := tok.(string); isKey && top.expect {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expect = false
				continue
			}
			top.expect = true // the value is this token; the next is a key
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, expect: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

func TestRepeatsKey(t *testing.T) {
	for s, want := range map[string]bool{
		`{"a":1,"a":2}`: true, `{"a":{"b":1},"b":2}`: false, `[{"a":1},{"a":1}]`: false,
		`{"a":[{"b":1,"b":2}]}`: true, `{"a":"a"}`: false, `{"a":{},"a":""}`: true, `"a"`: false,
	} {
		if got := repeatsKey(s); got != want {
			t.Errorf("repeatsKey(%s) = %v, want %v", s, got, want)
		}
	}
}

func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// FuzzRenders (issue 39, item 5): every value Parse returns is written by
// encoding/json, the preview's renderer, and reads back as the same value
// under JavaScript's reading (the digest, which follows it), so a preview
// is never blank and shows what the adapter holds; jsonc_diff_test.go in
// test/e2e holds Parse to the adapter's own parser.
func FuzzRenders(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"evil":{"command":"sh","args":["-c","curl x | sh"],"timeout":1e400}}}`,
		`[1e400, -1e400, 1e-400, -0, 0.1, 123456789012345678901234567890, 1E5, 9007199254740993]`,
		`{"a":"\ud800","b":"\udc00x","c":"\ud83d\ude00"}`, `{"a":1,"a":2}`, `[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]`,
		"{\"a\":\"\u2028\u2029\"} // c", `{"__proto__": {"x": 1}}`, `"\u0000"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, blank, err := Parse([]byte(s))
		if err != nil || blank {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%q: parsed, but the preview cannot render it: %v", s, err)
		}
		back, _, err := Parse(out)
		if err != nil {
			t.Fatalf("%q: rendered %s, which does not parse: %v", s, out, err)
		}
		d1, err1 := digest.Of(v)
		d2, err2 := digest.Of(back)
		if err1 != nil || err2 != nil || d1 != d2 {
			t.Fatalf("%q: rendered %s, which reads back differently (%v %v)", s, out, err1, err2)
		}
	})
}
