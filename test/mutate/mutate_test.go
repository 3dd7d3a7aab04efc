package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListApplies: every mutation in the list names a file of this
// checkout whose text it finds exactly once, so the list cannot go stale
// unnoticed; and it holds at least the mutations issue 41 named.
func TestListApplies(t *testing.T) {
	f, err := os.Open("mutations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range ms {
		ids[m.ID] = true
		src, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		if _, err := m.Apply(src); err != nil {
			t.Error(err)
		}
	}
	for _, id := range []string{"R1", "R2", "G1", "G2", "K1", "E1", "S1"} {
		if !ids[id] {
			t.Errorf("mutation %s (issue 41) is not in the list", id)
		}
	}
}

func TestParse(t *testing.T) {
	good := `# a comment
== A1
file: a.go
test: go test ./a/
what: the check dropped
--- old
	if x {
		return err
	}
+++ new
	if false {
		return err
	}

# a comment between two mutations is not part of the first one's text

== A2
file: b.go
test: true
what: a line deleted
--- old
	check()
+++ new
`
	ms, err := Parse(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Old != "\tif x {\n\t\treturn err\n\t}" || ms[0].New != "\tif false {\n\t\treturn err\n\t}" || ms[1].New != "" {
		t.Fatalf("parsed %+v", ms)
	}
	out, err := ms[0].Apply([]byte("func f() {\n\tif x {\n\t\treturn err\n\t}\n}\n"))
	if err != nil || !strings.Contains(string(out), "if false") {
		t.Errorf("Apply = %q, %v", out, err)
	}
	if _, err := ms[1].Apply([]byte("\tcheck()\n\tcheck()\n")); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("a text found twice: %v", err)
	}
	if _, err := ms[1].Apply([]byte("nothing")); err == nil || !strings.Contains(err.Error(), "not in") {
		t.Errorf("a text not found: %v", err)
	}
	for _, bad := range []string{
		"stray text\n",
		"== A\nfile: a\ntest: t\n--- old\nx\n",                      // no what
		"== A\nfile: a\ntest: t\nwhat: w\n",                         // no old
		"== A\nfile: a\ntest: t\nwhat: w\n--- old\nx\n+++ new\nx\n", // no change
		"== A\nfile: a\ntest: t\nwhat: w\nfoo: bar\n",               // unknown key
		"== A\nfile: a\ntest: t\nwhat: w\n--- old\nx\n== A\nfile: a\ntest: t\nwhat: w\n--- old\ny\n", // twice
	} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
