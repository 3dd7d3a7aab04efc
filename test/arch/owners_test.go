package arch

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// owners are facts of issue 43 that each have one owner in the source, by
// a mark no other non-test file of cmd/ or internal/ may hold.
var owners = []struct {
	fact  string
	mark  *regexp.Regexp
	owner []string // the files that may hold the mark
}{
	{"quoting a word for a shell (shquote.Quote, shquote.Show)",
		regexp.MustCompile("`'\\\\''`|\"'\\\\\\\\''\""), []string{"internal/shquote/shquote.go"}},
	{"asking whether Docker answers (ops.DockerAnswers)",
		regexp.MustCompile(`"info", "--format"`), []string{"internal/ops/machine.go"}},
	{"a server's failed last run, the notice of a server the sandbox stopped (engine.LastFailure, engine.StoppedNotice); the supervisor records it",
		regexp.MustCompile(`serverrun\.Failed\b`), []string{"internal/engine/stopped.go", "internal/sandboxexec/supervise.go"}},
	{"a path inside a folder, tested by hand (paths.Within)",
		regexp.MustCompile(`HasPrefix\([^\n]*\+ *("/"|string\(filepath\.Separator\))\)`), nil},
}

// TestOneOwner: each fact above is written in its owner's files alone.
func TestOneOwner(t *testing.T) {
	found := make([][]string, len(owners))
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join("..", "..", top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
			rel = filepath.ToSlash(rel)
			for i, o := range owners {
				if o.mark.Match(src) {
					found[i] = append(found[i], rel)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range owners {
		for _, f := range found[i] {
			if !slices.Contains(o.owner, f) {
				t.Errorf("%s writes %s by itself: use its owner (%v)", f, o.fact, o.owner)
			}
		}
		for _, f := range o.owner {
			if !slices.Contains(found[i], f) {
				t.Errorf("%s, the owner of %s, no longer holds its mark %s: the test looks for the wrong text", f, o.fact, o.mark)
			}
		}
	}
}
