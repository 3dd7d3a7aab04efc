package jsonc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "// c\n{}", "{,}", "[1,2,]", `"x"`, "/* */"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, b1, err1 := Parse(data)
		v2, b2, err2 := Parse(data)
		if (err1 == nil) != (err2 == nil) || b1 != b2 || !cmp.Equal(v1, v2) {
			t.Fatalf("unstable parse")
		}
	})
}
