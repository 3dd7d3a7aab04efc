package digest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// vectorsPath holds the reference vectors: the digests the TypeScript
// piagent 1.5.5 recorded (a copy of shared/reference/digest-vectors.json, so
// the tests pass in a plain clone).
const vectorsPath = "testdata/digest-vectors.json"

type vector struct {
	Entry  json.RawMessage `json:"entry"`
	Digest string          `json:"digest"`
}

func decode(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// TestReferenceVectors reproduces every digest the TypeScript piagent
// recorded, except the lone-surrogate entry, which must differ.
func TestReferenceVectors(t *testing.T) {
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("the digest vectors are needed at %s : %v", vectorsPath, err)
	}
	var vectors []vector
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatalf("parse %s: %v", vectorsPath, err)
	}
	if len(vectors) < 10 {
		t.Fatalf("%s holds %d vectors, want at least 10", vectorsPath, len(vectors))
	}
	lone := 0
	for i, v := range vectors {
		got, err := Of(decode(t, v.Entry))
		if err != nil {
			t.Errorf("vector %d: %v", i, err)
			continue
		}
		if bytes.Contains(bytes.ToLower(v.Entry), []byte(`\ud83d"`)) {
			lone++
			// encoding/json turned the lone surrogate into U+FFFD.
			if got == v.Digest {
				t.Errorf("vector %d (lone surrogate): digest %s equals the JavaScript one; want it to differ", i, got)
			}
			c, _ := Canonical(decode(t, v.Entry))
			if !strings.Contains(string(c), "\ufffd") {
				t.Errorf("vector %d: canonical form lacks U+FFFD:\n%s", i, c)
			}
			continue
		}
		if got != v.Digest {
			c, _ := Canonical(decode(t, v.Entry))
			t.Errorf("vector %d: digest %s, want %s; canonical:\n%s", i, got, v.Digest, c)
		}
	}
	if lone != 1 {
		t.Errorf("found %d lone-surrogate vectors, want 1", lone)
	}
}

type jsVectors struct {
	Numbers []struct{ Bits, Text string } `json:"numbers"`
	Keys    []struct {
		Keys  []string `json:"keys"`
		Order []string `json:"order"`
	} `json:"keys"`
	Strings []struct{ S, JSON string } `json:"strings"`
}

func loadJSVectors(t *testing.T) jsVectors {
	t.Helper()
	data, err := os.ReadFile("testdata/js-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v jsVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNumbersMatchJavaScript checks appendNumber against what Node printed
// for the same bit patterns (testdata/gen-js-vectors.js).
func TestNumbersMatchJavaScript(t *testing.T) {
	v := loadJSVectors(t)
	if len(v.Numbers) < 1000 {
		t.Fatalf("only %d number vectors", len(v.Numbers))
	}
	for _, n := range v.Numbers {
		b, err := hex.DecodeString(n.Bits)
		if err != nil || len(b) != 8 {
			t.Fatalf("bad bits %q", n.Bits)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		if got := string(appendNumber(nil, f)); got != n.Text {
			t.Errorf("%s (%v): got %q, want %q", n.Bits, f, got, n.Text)
		}
	}
}

func TestKeyOrderMatchesJavaScript(t *testing.T) {
	v := loadJSVectors(t)
	for _, k := range v.Keys {
		got := append([]string(nil), k.Keys...)
		sortKeys(got)
		if diff := cmp.Diff(k.Order, got); diff != "" {
			t.Errorf("order of %q (-js +go):\n%s", k.Keys, diff)
		}
	}
}

func TestStringsMatchJavaScript(t *testing.T) {
	v := loadJSVectors(t)
	for _, s := range v.Strings {
		got, err := Canonical(s.S)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.JSON + "\n"; string(got) != want {
			t.Errorf("%q: got %q, want %q", s.S, got, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, "null"},
		{"true", true, "true"},
		{"empty object", map[string]any{}, "{}"},
		{"nil map", map[string]any(nil), "{}"},
		{"empty array", []any{}, "[]"},
		{"nil slice", []any(nil), "[]"},
		{"int", 42, "42"},
		{"int64 beyond 2^53", int64(1<<53 + 1), "9007199254740992"},
		{"json.Number", json.Number("1.50"), "1.5"},
		{"json.Number exponent", json.Number("1E21"), "1e+21"},
		{"json.Number overflow", json.Number("1e400"), "null"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"NaN", math.NaN(), "null"},
		{"-Inf", math.Inf(-1), "null"},
		{"no html escaping", "<a&b>", `"<a&b>"`},
		{"line separators raw", "\u2028\u2029", "\"\u2028\u2029\""},
		{"control", "\x00\x1f\x7f", `"\u0000\u001f` + "\x7f\""},
		{"nested", map[string]any{"b": []any{1.0, map[string]any{"d": 2.0, "c": 3.0}}, "a": "x"},
			"{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    {\n      \"c\": 3,\n      \"d\": 2\n    }\n  ]\n}"},
		{"index keys first", map[string]any{"b": 1, "10": 2, "9": 3, "01": 4},
			"{\n  \"9\": 3,\n  \"10\": 2,\n  \"01\": 4,\n  \"b\": 1\n}"},
		{"empty inside", map[string]any{"a": []any{}, "b": map[string]any{}},
			"{\n  \"a\": [],\n  \"b\": {}\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want+"\n", string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want error
	}{
		{"struct", struct{}{}, ErrUnsupported},
		{"map of strings", map[string]string{}, ErrUnsupported},
		{"nested unsupported", []any{1, []string{"x"}}, ErrUnsupported},
		{"bad json.Number", json.Number("x"), ErrUnsupported},
		{"invalid utf-8 value", "a\xffb", ErrInvalidUTF8},
		{"invalid utf-8 key", map[string]any{"\xff": 1}, ErrInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Canonical(tt.in)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if _, err := Of(tt.in); !errors.Is(err, tt.want) {
				t.Errorf("Of: got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	// sha256("") is well known.
	if got, want := Bytes(nil), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("Bytes(nil) = %s, want %s", got, want)
	}
	// Of is Bytes over Canonical.
	c, _ := Canonical(map[string]any{})
	d, _ := Of(map[string]any{})
	if d != Bytes(c) || c == nil || string(c) != "{}\n" {
		t.Errorf("Of = %s, Bytes(Canonical) = %s", d, Bytes(c))
	}
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a", "", 1},
		{"a", "b", -1},
		{"\U0001F600", "\uE000", -1}, // surrogate pair before U+E000
		{"\U0001F600", "\uD7FF", 1},
		{"\U0001F600", "\U0001F601", -1}, // same high surrogate
		{"\U00010000", "\U0001F600", -1},
		{"ab", "a", 1},
	}
	for _, tt := range tests {
		if got := compareUTF16(tt.a, tt.b); got != tt.want {
			t.Errorf("compareUTF16(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := compareUTF16(tt.b, tt.a); got != -tt.want {
			t.Errorf("compareUTF16(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"command":"npx","args":["-y","@acme/x"],"env":{"9":"b","10":"a"}}`))
	f.Add([]byte(`[1e21, 1e-7, -0, 0.1, 123456789012345678901234567890, "\u2028", "\ud83d"]`))
	f.Add([]byte(`{"":{"":[{}]},"\uffff":1,"😀":2}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`"tab\there"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		c, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical(%s): %v", data, err)
		}
		if !bytes.HasSuffix(c, []byte("\n")) {
			t.Fatalf("no trailing newline: %q", c)
		}
		var back any
		if err := json.Unmarshal(c, &back); err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, c)
		}
		if diff := cmp.Diff(v, back); diff != "" {
			t.Fatalf("canonical form changed the value (-in +out):\n%s", diff)
		}
		again, err := Canonical(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c, again) {
			t.Fatalf("not stable:\n%s\n---\n%s", c, again)
		}
	})
}

func BenchmarkOf(b *testing.B) {
	entry := decode(b, []byte(`{"command":"node","args":["server.js","--flag=<a&b>","--port","8080"],
		"env":{"B":"2","A":"1","Z":"${HOME}","TOKEN":"${TOKEN}"},"cwd":"./tools","lifecycle":"eager",
		"directTools":["search","fetch"],"headers":{"Authorization":"Bearer ${TOKEN}"},"timeout":30000}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Of(entry); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalLarge(b *testing.B) {
	m := map[string]any{}
	for i := range 1000 {
		m["server-"+strconv.Itoa(i)] = map[string]any{
			"command": "node", "args": []any{"a", "b", float64(i)}, "env": map[string]any{"K": "v"},
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical(m); err != nil {
			b.Fatal(err)
		}
	}
}
