package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/jsonc"
)

// TestDifferentialJSONC feeds generated and mutated documents to piagent's
// reader and to the adapter's own parseJsonWithComments (and its blank
// check) from the pinned package, in one Node process, and asserts they
// agree on blank, accept/reject and the value. Every disagreement ever found
// is kept in testdata/jsonc-seeds.txt and runs first.
//
// PIAGENT_JSONC_DIFF_N sets how many generated inputs (default 10000);
// PIAGENT_JSONC_DIFF_SEEDS names a file that every disagreeing input is
// appended to (base64), for keeping in testdata/jsonc-seeds.txt.
func TestDifferentialJSONC(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	n := 10000
	if s := os.Getenv("PIAGENT_JSONC_DIFF_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	inputs := seedInputs(t)
	seeds := len(inputs)
	r := rand.New(rand.NewPCG(20261203, uint64(n)))
	for len(inputs) < seeds+n {
		inputs = append(inputs, generateJSONC(r))
	}

	var in bytes.Buffer
	for _, doc := range inputs {
		in.WriteString(base64.StdEncoding.EncodeToString(doc))
		in.WriteByte('\n')
	}
	cmd := exec.Command(deps.node, Fixture("parse-jsonc.mjs"), filepath.Dir(filepath.Dir(filepath.Dir(deps.adapter))))
	cmd.Env = []string{"PATH=" + deps.nodeBin}
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("parse-jsonc.mjs: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	i, disagree, accepted, blanks := 0, 0, 0, 0
	for sc.Scan() {
		var want struct {
			Blank bool `json:"blank"`
			OK    bool `json:"ok"`
			Value any  `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		doc := inputs[i]
		v, blank, err := jsonc.Parse(doc)
		got := ""
		switch {
		case blank != want.Blank:
			got = "blank differs"
		case want.Blank:
			blanks++
		case (err == nil) != want.OK:
			got = "accept/reject differs (piagent: " + errString(err) + ")"
		case err == nil && !sameJSON(want.Value, comparable(v)):
			got = fmt.Sprintf("value differs: adapter %v, piagent %v", want.Value, comparable(v))
		case err == nil:
			accepted++
		}
		if got != "" {
			if f := os.Getenv("PIAGENT_JSONC_DIFF_SEEDS"); f != "" {
				appendSeed(t, f, doc)
			}
			disagree++
			if disagree <= 10 {
				t.Errorf("input %d %q (seed: %s): %s", i, doc, base64.StdEncoding.EncodeToString(doc), got)
			}
		}
		i++
	}
	if i != len(inputs) {
		t.Fatalf("the adapter answered %d of %d inputs", i, len(inputs))
	}
	t.Logf("%d inputs (%d kept seeds, %d generated): %d accepted, %d blank, %d rejected by both; %d disagreements",
		len(inputs), seeds, n, accepted, blanks, len(inputs)-accepted-blanks-disagree, disagree)
	if accepted < len(inputs)/10 || len(inputs)-accepted-blanks < len(inputs)/10 {
		t.Errorf("the generator is lopsided: %d accepted of %d", accepted, len(inputs))
	}
}

// sameJSON compares two decoded JSON values (float64, string, bool, nil,
// []any, map[string]any); -0 equals 0, as JSON.stringify has it.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameJSON(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func errString(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

// comparable writes piagent's value the way parse-jsonc.mjs writes the
// adapter's: ±Inf as {"$inf": ±1}, through JSON. piagent keeps a number a
// float cannot hold as written (json.Number: "1e400", "-0"; issue 39, item
// 5), which is the number JavaScript holds (Infinity, 0) by its value.
func comparable(v any) any {
	var conv func(any) any
	conv = func(v any) any {
		if n, ok := v.(json.Number); ok {
			f, _ := strconv.ParseFloat(string(n), 64) // ±Inf past the range, 0 below it
			if f == 0 {
				f = 0 // -0 is written "0" by JavaScript's JSON
			}
			v = f
		}
		switch x := v.(type) {
		case float64:
			if math.IsInf(x, 0) {
				s := 1.0
				if x < 0 {
					s = -1
				}
				return map[string]any{"$inf": s}
			}
			return x
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = conv(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = conv(e)
			}
			return out
		}
		return v
	}
	return conv(v)
}

// seedInputs are the kept inputs: the cases the issue names and every
// disagreement found so far (testdata/jsonc-seeds.txt, base64 per line).
func seedInputs(t *testing.T) [][]byte {
	out := [][]byte{
		[]byte(`{"mcpServers":{"evil":{"command":"sh"}}} // c`),
		[]byte(`{"mcpServers":{"evil":{"command":"sh","timeout":1e400}}}`),
		[]byte("\ufeff{}"), []byte("\ufeff// only\n"), []byte(`{,}`), []byte(`[,]`), []byte(`[1,,]`),
		[]byte(`{"a":1,"a":2}`), []byte(`"\ud800"`), []byte("\"\u2028\""), []byte("/* x"), []byte("{\"a\":1}\n/* x"),
		[]byte(`{"a":"// not a comment","b":"/* nor this */"}`), []byte(`{"a":"\\"}//x`), []byte("[1e-400,-0,-1e400]"),
		[]byte("{\"a\":\"\xff\xe2\x82\"}"), []byte("[\xc0]"), []byte("{\"__proto__\": 1}"),
		[]byte(strings.Repeat("[", 500) + strings.Repeat("]", 500)),
	}
	data, err := os.ReadFile(filepath.Join("testdata", "jsonc-seeds.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(line)
		if err != nil {
			t.Fatalf("jsonc-seeds.txt: %v", err)
		}
		out = append(out, b)
	}
	return out
}

// jsoncPieces are the fragments the generator draws on: JSON's own, the
// comment and trailing-comma forms strip-json-comments handles, and the
// places where JavaScript and Go could read differently.
var jsoncPieces = []string{
	"{", "}", "[", "]", ",", ":", " ", "\n", "\r\n", "\t",
	`"a"`, `"mcpServers"`, `"b\"c"`, `"\\"`, `"\\\"`, `"// x"`, `"/* y */"`, `"\u0041"`, `"\ud83d\ude00"`, `"\ud800"`,
	"\"\u2028\"", "\"\xff\"", "\"\xe2\x82\"", "\xef\xbb\xbf", "\u00a0", "\u2028",
	"0", "-0", "1", "12.5", "1e400", "-1e400", "1e-400", "9007199254740993", "01", "1.", ".5", "+1", "0x10",
	"true", "false", "null", "tru", "NaN", "Infinity", "undefined",
	"// c\n", "// c", "/* x */", "/*", "*/", "/**/", "/", "//\r\n", "/* a\n b */",
	",}", ",]", ", }", ",\n]", ",/* x */}", ",// c\n]",
}

func generateJSONC(r *rand.Rand) []byte {
	if r.IntN(2) == 0 {
		// a structured document, then mutated
		var b strings.Builder
		genValue(r, &b, 0)
		s := b.String()
		for k := r.IntN(3); k > 0 && len(s) > 0; k-- {
			at := r.IntN(len(s) + 1)
			switch r.IntN(3) {
			case 0: // insert a piece
				s = s[:at] + jsoncPieces[r.IntN(len(jsoncPieces))] + s[at:]
			case 1: // delete a byte
				if at < len(s) {
					s = s[:at] + s[at+1:]
				}
			default: // duplicate a slice
				end := min(len(s), at+r.IntN(6))
				s = s[:end] + s[at:end] + s[end:]
			}
		}
		return []byte(s)
	}
	var b strings.Builder
	for k := 1 + r.IntN(12); k > 0; k-- {
		b.WriteString(jsoncPieces[r.IntN(len(jsoncPieces))])
	}
	return []byte(b.String())
}

// genValue writes a valid JSONC value: comments and trailing commas in
// the places the adapter allows them.
func genValue(r *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		switch r.IntN(8) {
		case 0:
			b.WriteString(" // note\n")
		case 1:
			b.WriteString("/* c */")
		case 2:
			b.WriteString("\n  ")
		}
	}
	ws()
	switch k := r.IntN(7); {
	case depth < 4 && k == 0:
		b.WriteString("{")
		n := r.IntN(4)
		for i := 0; i < n; i++ {
			ws()
			b.WriteString(strconv.Quote([]string{"a", "b", "mcpServers", "command", "a"}[r.IntN(5)]))
			ws()
			b.WriteString(":")
			genValue(r, b, depth+1)
			if i < n-1 || r.IntN(3) == 0 {
				b.WriteString(",")
			}
		}
		ws()
		b.WriteString("}")
	case depth < 4 && k == 1:
		b.WriteString("[")
		n := r.IntN(4)
		for i := 0; i < n; i++ {
			genValue(r, b, depth+1)
			if i < n-1 || r.IntN(3) == 0 {
				b.WriteString(",")
			}
		}
		ws()
		b.WriteString("]")
	case k == 2:
		b.WriteString([]string{"0", "-0", "3.25", "1e400", "-2e-400", "123456789012345678901234567890", "1E5"}[r.IntN(7)])
	case k == 3:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	default:
		b.WriteString([]string{`"x"`, `"a // b"`, `"/* c */"`, `"\\\\"`, `"q\"uote"`, `"\u00e9\ud83d\ude00"`, "\"\u2028\"", `"\t"`}[r.IntN(8)])
	}
	ws()
}

func appendSeed(t *testing.T, file string, doc []byte) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(base64.StdEncoding.EncodeToString(doc) + "\n")
}
