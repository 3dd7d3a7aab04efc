package gate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/safefile"
)

// TestAfterEditsMatchesLoad: a cached gate refreshed from the watch's
// names (Gate.afterEdits, issue 46 item 1) must equal a gate computed from
// nothing, after every kind of change an agent can make inside a tree pin:
// a file rewritten (to new content, and back to what was approved), made
// executable, created, removed, renamed over another, a package.json and
// a folder changed. Each step compares the server's state and every pinned
// file's digest with a fresh Load, and the refreshes are counted, so the
// test fails both when the fast path is wrong and when it is never taken.
func TestAfterEditsMatchesLoad(t *testing.T) {
	home, proj := treeProject(t, 60)
	app := filepath.Join(proj, "app")
	// a link in the tree (node_modules/.bin has them): pinned by where it
	// points, it must not turn the watch off
	if err := os.Symlink("f00001.js", filepath.Join(app, "src", "d000", "link.js")); err != nil {
		t.Fatal(err)
	}
	// a second server on the same package, never approved: its pinned
	// list is refreshed the other way (repin), for a later approval
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"custom":{"command":"./bin/serve","cwd":"app"},"pending":{"command":"./bin/serve","cwd":"app","args":["--other"]}}}`), 0o644)
	time.Sleep(safefile.RacyWindow) // the tree as a session finds it
	o := Options{Home: home, Cwd: proj}
	var c Cache
	if _, err := c.Get(o); err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		var out []string
		filepath.WalkDir(filepath.Join(app, "src"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	original := map[string]string{}
	for _, f := range files() {
		data, _ := os.ReadFile(f)
		original[f] = string(data)
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { fs := files(); return fs[r.IntN(len(fs))] }
	type step struct {
		name string
		do   func() error
	}
	steps := []step{
		{"rewrite", func() error { return os.WriteFile(pick(), []byte(fmt.Sprintf("evil %d\n", r.Int())), 0o644) }},
		{"same size", func() error {
			f := pick()
			data, _ := os.ReadFile(f)
			data[0] ^= 1
			return os.WriteFile(f, data, 0o644)
		}},
		{"restore", func() error {
			for f, data := range original {
				if cur, err := os.ReadFile(f); err == nil && string(cur) != data {
					if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"chmod", func() error { return os.Chmod(pick(), 0o755) }},
		{"create", func() error {
			return os.WriteFile(filepath.Join(app, "src", "d000", fmt.Sprintf("new%d.js", r.Int())), []byte("x"), 0o644)
		}},
		{"remove", func() error { return os.Remove(pick()) }},
		{"rename over", func() error { return os.Rename(pick(), pick()) }},
		{"package.json", func() error {
			return os.WriteFile(filepath.Join(proj, "package.json"), []byte(fmt.Sprintf(`{"name":"p%d"}`, r.Int())), 0o644)
		}},
		{"folder", func() error { return os.MkdirAll(filepath.Join(app, "src", fmt.Sprintf("x%d", r.Int())), 0o755) }},
	}
	before, compares := refreshes.Load(), compared.Load()
	for i := range 120 {
		st := steps[r.IntN(len(steps))]
		if i < 3 {
			st = steps[i] // each kind that refreshes, first
		}
		if err := st.do(); err != nil {
			t.Fatalf("step %d %s: %v", i, st.name, err)
		}
		got, err := c.Get(o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"custom", "pending"} {
			gs, _ := got.Server(name)
			ws, _ := want.Server(name)
			if gs.State != ws.State || gs.Reason != ws.Reason {
				t.Fatalf("step %d %s: %s cached %s (%s), fresh %s (%s)", i, st.name, name, gs.State, gs.Reason, ws.State, ws.Reason)
			}
			if !slices.Equal(gs.Pinned, ws.Pinned) {
				t.Fatalf("step %d %s: %s's pinned files differ from a fresh load", i, st.name, name)
			}
		}
	}
	if n := refreshes.Load() - before; n < 10 {
		t.Fatalf("the watch's names refreshed the gate %d times in 120 steps: the fast path was not exercised", n)
	}
	if n := compared.Load() - compares; n < 10 {
		t.Fatalf("the server was compared again for its changed files alone %d times in 120 steps", n)
	}
	t.Logf("120 steps, %d answered from the watch's names (%d by comparing the changed files alone), each equal to a fresh load",
		refreshes.Load()-before, compared.Load()-compares)
}

// TestAfterEditsRunnerScript: a package.json's content decides which files
// npm start pins; rewritten to run a file of another package, the cached
// gate must pin that package too, as a fresh load does (the watch's names
// alone cannot tell, so it is checked the slow way).
func TestAfterEditsRunnerScript(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for p, data := range map[string]string{
		"srv/package.json":   `{"name":"srv","scripts":{"start":"node main.js"}}`,
		"srv/main.js":        "// main\n",
		"tools/package.json": `{"name":"tools"}`,
		"tools/x.js":         "// x\n",
		".mcp.json":          `{"mcpServers":{"npm":{"command":"npm","args":["start"],"cwd":"srv"}}}`,
	} {
		writeFile(t, filepath.Join(proj, p), data)
	}
	os.MkdirAll(home, 0o755)
	time.Sleep(safefile.RacyWindow)
	o := Options{Home: home, Cwd: proj}
	var c Cache
	g, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("npm"); slices.ContainsFunc(s.Pinned, func(p PinnedFile) bool { return p.Path == "tools/x.js" }) {
		t.Fatalf("control: tools/x.js pinned before the script names it: %v", s.Pinned)
	}
	writeFile(t, filepath.Join(proj, "srv", "package.json"), `{"name":"srv","scripts":{"start":"node ../tools/x.js"}}`)
	got, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Load(o)
	gs, _ := got.Server("npm")
	ws, _ := want.Server("npm")
	if !slices.ContainsFunc(ws.Pinned, func(p PinnedFile) bool { return p.Path == "tools/x.js" }) {
		t.Fatalf("a fresh load does not pin tools/x.js: %v", ws.Pinned)
	}
	if !slices.Equal(gs.Pinned, ws.Pinned) {
		t.Fatalf("cached gate pins %v, a fresh load %v", gs.Pinned, ws.Pinned)
	}
}
