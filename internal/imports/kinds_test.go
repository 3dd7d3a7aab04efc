package imports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTableHoldsTheReaders holds the kinds' table, from which the registry,
// the launcher and the self-protection derive what they know of import
// kinds, to what each reader really reads: every path a reader consults as
// a candidate, with every file present, is one of Files (so the registry
// protects it), lies in the project only for a kind that is not HomeOnly
// (so the launcher never keeps a kind that reads the repository), and
// holds one of its kind's marks (so a write to it that cannot be resolved
// is suspicious). Each kind has a reader and a mark.
func TestTableHoldsTheReaders(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "proj")
	files := Files(home, cwd)
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(Table()) != len(Kinds) || len(readers) != len(Kinds) {
		t.Fatalf("%d kinds in the table, %d names, %d readers", len(Table()), len(Kinds), len(readers))
	}
	for _, k := range Table() {
		if k.read == nil || len(k.Marks) == 0 || len(k.Home)+len(k.Project) == 0 {
			t.Errorf("%s: a reader, a mark and a file are needed", k.Name)
		}
		var own []string
		for _, e := range k.Home {
			own = append(own, filepath.Join(append([]string{home}, e...)...))
		}
		for _, e := range k.Project {
			own = append(own, filepath.Join(append([]string{cwd}, e...)...))
		}
		inProject := false
		for _, c := range Read(k.Name, home, cwd).Candidates {
			if !slices.Contains(own, c.Path) {
				t.Errorf("%s reads %s, which its row of the table does not name", k.Name, c.Path)
			}
			if strings.HasPrefix(c.Path, cwd+string(filepath.Separator)) {
				inProject = true
			}
		}
		if HomeOnly(k.Name) == inProject {
			t.Errorf("%s: HomeOnly %v, but it reads a file of the project: %v", k.Name, HomeOnly(k.Name), inProject)
		}
		for _, f := range own {
			rel, _ := filepath.Rel(root, f)
			if !Marked(strings.ToLower(filepath.ToSlash(rel))) {
				t.Errorf("%s: %s holds none of the marks %q", k.Name, rel, k.Marks)
			}
			if !slices.Contains(files, f) {
				t.Errorf("%s: Files misses %s", k.Name, f)
			}
		}
	}
	if HomeOnly("no-such-kind") {
		t.Error("an unknown kind is HomeOnly")
	}
	if Marked("src/main.go") || Marked("claude.md") {
		t.Error("a mark matches a file no kind reads")
	}
}
