package arch

import (
	"flag"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's list of every import")

const (
	module = "github.com/piagent/piagent/"
	doc    = "../../docs/architecture.md"
	// The list's markers in the document.
	listStart = "<!-- every import: TestArchitectureGraph holds it; go test ./test/arch -update rewrites it -->\n"
	listEnd   = "<!-- end of every import -->\n"
)

// imports reads the module's packages under cmd/, internal/ and
// extensions/ and the module packages each imports, from the source (every
// non-test file, whatever its build constraint: the graph is the union over
// systems), by their short names: "cli" for internal/cli, "cmd/piagent".
func imports(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	for _, top := range []string{"cmd", "internal", "extensions"} {
		err := filepath.WalkDir(filepath.Join("..", "..", top), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == "testdata" {
				if err == nil {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(filepath.Join("..", ".."), filepath.Dir(p))
			name := short(filepath.ToSlash(rel))
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			if _, ok := graph[name]; !ok {
				graph[name] = []string{}
			}
			for _, im := range f.Imports {
				path := strings.Trim(im.Path.Value, `"`)
				if dep, ok := strings.CutPrefix(path, module); ok && !slices.Contains(graph[name], short(dep)) {
					graph[name] = append(graph[name], short(dep))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, deps := range graph {
		slices.Sort(deps)
	}
	return graph
}

// short is a package's name in the document: internal/ dropped.
func short(rel string) string { return strings.TrimPrefix(rel, "internal/") }

// list is the document's list of every import, one line per package.
func list(graph map[string][]string) string {
	var names []string
	for n := range graph {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("```\n")
	for _, n := range names {
		deps := graph[n]
		if len(deps) == 0 {
			b.WriteString(n + ": (none)\n")
			continue
		}
		b.WriteString(n + ": " + strings.Join(deps, ", ") + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

var (
	arrow = regexp.MustCompile(`[─]+▶`)
	paren = regexp.MustCompile(`\([^)]*\)`)
)

// TestArchitectureGraph: docs/architecture.md's package graph is the
// source's. Every arrow of the drawing whose two ends are named packages
// is an import (a branch of the tree, ├──▶, is checked through the list);
// the packages called leaves import no package of the module, and every
// such package is called one; the list of every import is exact.
func TestArchitectureGraph(t *testing.T) {
	graph := imports(t)
	if len(graph) < 30 || !slices.Contains(graph["cli"], "ops") {
		t.Fatalf("read %d packages, cli imports %v", len(graph), graph["cli"])
	}
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start, end := strings.Index(text, listStart), strings.Index(text, listEnd)
	if start < 0 || end < start {
		t.Fatalf("docs/architecture.md has no list between %q and %q", listStart, listEnd)
	}
	want := list(graph)
	if got := text[start+len(listStart) : end]; got != want {
		if *update {
			text = text[:start+len(listStart)] + want + text[end:]
			if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("docs/architecture.md's list of every import is not the source's (go test ./test/arch -update rewrites it); want:\n%s", want)
		}
	}

	// The drawing: the first fenced block of "The packages".
	sec := text[strings.Index(text, "## The packages"):]
	open := strings.Index(sec, "```\n") + 4
	drawing := sec[open : open+strings.Index(sec[open:], "```")]
	known := func(n string) bool { _, ok := graph[n]; return ok }
	arrows, leaves := 0, 0
	for _, line := range strings.Split(drawing, "\n") {
		if rest, ok := strings.CutPrefix(line, "leaves:"); ok {
			listed := map[string]bool{}
			for _, n := range strings.Split(paren.ReplaceAllString(rest, ""), ",") {
				n = strings.TrimSpace(n)
				listed[n] = true
				leaves++
				switch {
				case !known(n):
					t.Errorf("the drawing's leaf %q is no package", n)
				case len(graph[n]) > 0:
					t.Errorf("the drawing calls %s a leaf, but it imports %v", n, graph[n])
				}
			}
			for n, deps := range graph {
				if len(deps) == 0 && !listed[n] {
					t.Errorf("%s imports no package of the module, and the drawing's leaves do not name it", n)
				}
			}
			continue
		}
		parts := arrow.Split(paren.ReplaceAllString(line, ""), -1)
		for i := 0; i+1 < len(parts); i++ {
			var from []string
			for _, n := range strings.Split(parts[i], ",") {
				n = strings.TrimSpace(n)
				if f := strings.Fields(n); len(f) > 0 {
					n = f[len(f)-1] // the word before the arrow
				}
				if known(n) {
					from = append(from, n)
				}
			}
			for _, to := range strings.Split(parts[i+1], ",") {
				to = strings.TrimSpace(to)
				if f := strings.Fields(to); len(f) > 0 {
					to = f[0] // the word after the arrow
				}
				if !known(to) {
					t.Errorf("the drawing's arrow to %q in %q: no such package", to, strings.TrimSpace(line))
					continue
				}
				for _, f := range from {
					arrows++
					if !slices.Contains(graph[f], to) {
						t.Errorf("the drawing has %s ──▶ %s, but %s imports %v", f, to, f, graph[f])
					}
				}
			}
		}
	}
	if arrows < 20 || leaves < 5 {
		t.Errorf("checked %d arrows and %d leaves of the drawing", arrows, leaves)
	}
}
