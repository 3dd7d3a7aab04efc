package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/ops"
)

// FuzzIndentJSON: the one-pass layout is json.Indent's, for whatever
// encoding/json writes.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"x\"y,z:{["}],"c":{},"d":[],"e":null}`, `[]`, `"s"`, `[[],[{}]]`, `{"k\\":":"v\\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		var compact bytes.Buffer
		enc := json.NewEncoder(&compact)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		// written in pieces of every size, as an encoder may
		for _, piece := range []int{1, 3, 4096} {
			var got bytes.Buffer
			lw := &layoutWriter{w: bufio.NewWriter(&got)}
			for b := compact.Bytes(); len(b) > 0; b = b[min(piece, len(b)):] {
				lw.Write(b[:min(piece, len(b))])
			}
			lw.w.Flush()
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%q in pieces of %d:\n got %q\nwant %q", compact.Bytes(), piece, got.Bytes(), want.Bytes())
			}
		}
	})
}

// FuzzAppendRow: a row written by hand (ops.Row.AppendJSON) is
// encoding/json's row, laid out as JSON lays out list's servers, for any field values: strings that
// need escaping, empty optional fields, absent and present arrays.
func FuzzAppendRow(f *testing.F) {
	f.Add("srv", "project", "layer", "ready", "", "fix <x> & y", "stdio", "node s.js", "/p/.mcp.json", "", true, "", true, "sha256:ab", "A\x00B", "", "")
	f.Add("é\u2028", "\"q\"", "\\", "\t", "\xff", "", "", "", "", "cursor", false, "why", false, "", "", "cmd", "hint\n")
	f.Fuzz(func(t *testing.T, name, scope, layer, state, reason, fix, transport, target, file, kind string, repo bool,
		repoReason string, loads bool, digest, missing, missingCmd, hints string) {
		r := ops.Row{Name: name, Scope: scope, Layer: layer, State: state, Reason: reason, Fix: fix,
			Transport: transport, Target: target, RepositoryControlled: repo, RepositoryReason: repoReason,
			AdapterLoads: loads, Digest: digest, MissingCommand: missingCmd}
		r.Source.File, r.Source.Kind = file, kind
		if missing != "" {
			r.MissingEnv = strings.Split(missing, ",")
		}
		if hints != "" {
			r.Hints = strings.Split(hints, ",")
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("    ", "  ")
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		got := r.AppendJSON(nil)
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
			t.Fatalf("got\n%s\nwant\n%s", got, w)
		}
	})
}

// TestFitTable: on an 80-column terminal, list's table fits (TARGET and
// SOURCE clipped with …); without a terminal nothing is clipped.
func TestFitTable(t *testing.T) {
	row := [6]string{"chrome-devtools", "global", "ready", "stdio", "npx -y chrome-devtools-mcp@0.12.1 --isolated --headless", "~/.config/mcp/mcp.json (claude-desktop) [not loaded by the adapter]"}
	head := [6]string{"NAME", "SCOPE", "STATE", "TRANSPORT", "TARGET", "SOURCE"}
	rows := [][6]string{head, row}
	FitTable(rows, 0)
	if rows[1] != row {
		t.Fatalf("clipped without a terminal: %q", rows[1])
	}
	FitTable(rows, 80)
	n := 0
	for i, c := range rows[1] {
		n += utf8.RuneCountInString(c)
		if i < 5 {
			n += 2
		}
	}
	if n > 80 || !strings.HasSuffix(rows[1][4], "…") {
		t.Errorf("row is %d columns on an 80-column terminal: %q", n, rows[1])
	}
}
