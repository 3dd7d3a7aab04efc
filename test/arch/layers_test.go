package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cliTarget is what internal/cli is to import of the module in the end
// (issue 43, item 1): the operations layer and its table of verbs, and
// render, the edge's rendering of ops's results (which imports ops alone:
// TestRenderImportsOnlyOps). The rest of its imports are the standard
// library's and cobra's.
var cliTarget = []string{"ops", "ops/verbs", "render"}

// cliStill are the module packages internal/cli imports today beyond the
// target, while its verbs move to internal/ops one by one. The list only
// shrinks: a package cli stops importing leaves it (the test says so), and
// a package not on it fails the test. At entry (the verbs table and the
// first moves of the operations layer) it held 28 of the module's packages;
// it is empty since the list's, get's and doctor's answers became ops's
// types and their words moved to render.
var cliStill = []string{}

// rendering are the packages of the edge: the operations layer imports
// none of them, and writes no words to a terminal itself.
var rendering = []string{
	module + "internal/cli", module + "internal/render", "github.com/spf13/cobra", "text/tabwriter",
}

// TestRenderImportsOnlyOps: the rendering package words ops's results; it
// reaches nothing of the core itself, so what it shows is what ops decided.
func TestRenderImportsOnlyOps(t *testing.T) {
	got, ok := imports(t)["render"]
	if !ok {
		t.Fatal("read no internal/render")
	}
	for _, p := range got {
		if p != "ops" {
			t.Errorf("internal/render imports %s: it renders ops's results, and reaches the core through ops alone", p)
		}
	}
}

// TestCLIImportsOnlyTheOperationsLayer holds internal/cli to the target and
// the shrinking allow-list above.
func TestCLIImportsOnlyTheOperationsLayer(t *testing.T) {
	got := imports(t)["cli"]
	for _, p := range got {
		if !slices.Contains(cliTarget, p) && !slices.Contains(cliStill, p) {
			t.Errorf("internal/cli imports %s: the edge reaches the core through internal/ops (add the verb there), not directly", p)
		}
	}
	for _, p := range cliStill {
		if !slices.Contains(got, p) {
			t.Errorf("internal/cli no longer imports %s: take it off cliStill, so that the list only shrinks", p)
		}
	}
	t.Logf("internal/cli imports %d module packages: %d beyond the operations layer (%s)", len(got), len(cliStill), strings.Join(cliStill, ", "))
}

// TestOpsImportsNoRendering: the operations layer returns values; the
// words, flags and terminals are the edge's.
func TestOpsImportsNoRendering(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "internal", "ops*"))
	sub, _ := filepath.Glob(filepath.Join("..", "..", "internal", "ops", "*"))
	dirs = append(dirs, sub...)
	n := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			n++
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range pf.Imports {
				if p := strings.Trim(im.Path.Value, `"`); slices.Contains(rendering, p) {
					t.Errorf("%s imports %s: the operations layer renders nothing", f, p)
				}
			}
			for _, w := range []string{"os.Stdout", "os.Stderr", "fmt.Print", "fmt.Fprint"} {
				if strings.Contains(string(src), w) {
					t.Errorf("%s uses %s: the operations layer says what it has to say through Ops's callbacks and its results", f, w)
				}
			}
		}
	}
	if n < 3 {
		t.Fatalf("read %d files of internal/ops", n)
	}
}
