package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
)

// treeProject is a project whose repository server runs ./bin/serve with
// cwd app: a whole-tree pin over n files, approved.
func treeProject(tb testing.TB, n int) (home, proj string) {
	tb.Helper()
	root := tb.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	app := filepath.Join(proj, "app")
	for i := 0; i < n; i++ {
		p := filepath.Join(app, "src", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.js", i))
		if i == 0 {
			p = filepath.Join(app, "bin", "serve")
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("// file %d\n", i)), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"custom":{"command":"./bin/serve","cwd":"app"}}}`), 0o644)
	g, err := Load(Options{Home: home, Cwd: proj})
	if err != nil {
		tb.Fatal(err)
	}
	s, _ := g.Server("custom")
	files := map[string]string{}
	for _, p := range s.Pinned {
		files[p.Path] = p.Digest
	}
	st := approval.Open(filepath.Join(home, ".pi", "piagent-mcp-approvals.json"))
	if err := st.Update(func(d *approval.Data) error {
		d.Set(g.Project, "custom", approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-03T00:00:00Z", Files: files})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return home, proj
}

// A whole-tree pin sees a new untracked file under the cwd at once,
// through the cached gate (the folders are in the signature).
func TestTreePinNewFile(t *testing.T) {
	t.Parallel()
	home, proj := treeProject(t, 50)
	var c Cache
	g, err := c.Get(Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("custom"); s.State != Ready || len(s.Pinned) != 50 || s.Pinned[0].Tree != "app" {
		t.Fatalf("custom: %s, %d pinned", s.State, len(s.Pinned))
	}
	os.WriteFile(filepath.Join(proj, "app", "src", "d000", "new.js"), []byte("x"), 0o644)
	g, _ = c.Get(Options{Home: home, Cwd: proj})
	if s, _ := g.Server("custom"); s.State != ApprovalChanged || s.Reason != "approved, but app/src/d000/new.js is new since" {
		t.Fatalf("after a new file: %s (%s)", s.State, s.Reason)
	}
}

// BenchmarkTreePin10000: a whole-tree pin over 10,000 files. Cold is the
// first hash (no digest cached); Warm is the re-check before a tool call
// when nothing changed (the cached gate's signature: one stat per file and
// folder); Recompute is a full gate after a change elsewhere, digests
// served from the stat cache.
func BenchmarkTreePin10000(b *testing.B) {
	home, proj := treeProject(b, 10000)
	o := Options{Home: home, Cwd: proj}
	b.Run("Cold", func(b *testing.B) {
		for b.Loop() {
			hashCache = sync.Map{}
			if _, err := Load(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Warm", func(b *testing.B) {
		var c Cache
		if _, err := c.Get(o); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := c.Get(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Recompute", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = time.Now
}
