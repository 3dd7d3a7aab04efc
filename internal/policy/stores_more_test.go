package policy

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/paths"
)

// testList reads a list of testdata: one path a line, "#" comments.
func testList(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestMoreSecretStores: every tool is refused each store the base policy
// added on 2026-12-07 (testdata/more-stores.txt), reading as writing, and
// the sandbox's list of stores holds each (or its folder); what lies
// beside them (testdata/beside-stores.txt) stays readable and off that
// list.
func TestMoreSecretStores(t *testing.T) {
	t.Parallel()
	stores, beside := testList(t, "more-stores.txt"), testList(t, "beside-stores.txt")
	p := mustMerge(t, "", "")
	for _, rel := range stores {
		path := "~/" + rel
		for _, c := range []Call{
			call("read", "path", path),
			call("grep", "pattern", "token", "path", path),
			call("write", "path", path, "content", "x"),
			call("bash", "command", "cd ~ && cat '"+rel+"'"),
			call("bash", "command", "cat ~/'"+rel+"'"),
		} {
			if d := p.Decide(c, testFacts()); d.Action != ActionBlock {
				t.Errorf("%s %v: %s %s, want a block", c.ToolName, c.Input, d.Action, d.Code)
			}
		}
	}
	for _, rel := range beside {
		if d := p.Decide(call("read", "path", "~/"+rel), testFacts()); d.Action != ActionAllow {
			t.Errorf("read ~/%s: %s %s (%s), want an allow", rel, d.Action, d.Code, d.Reason)
		}
	}
	home, proj := t.TempDir(), t.TempDir()
	for _, rel := range append(slices.Clone(stores), beside...) {
		f := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := LoadSettings(home, proj)
	hiddenList, _ := s.SecretStores(home)
	hidden := func(f string) bool {
		return slices.ContainsFunc(hiddenList, func(st string) bool { return paths.Within(st, f) })
	}
	for _, rel := range stores {
		if !hidden(filepath.Join(home, rel)) {
			t.Errorf("~/%s is not among the sandbox's stores: %v", rel, hiddenList)
		}
	}
	for _, rel := range beside {
		if hidden(filepath.Join(home, rel)) {
			t.Errorf("~/%s is among the sandbox's stores", rel)
		}
	}
}
