package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCacheSeesNewAndChangedFiles: a cached gate is recomputed when any path
// a reader consulted changes, including one that was missing.
func TestCacheSeesNewAndChangedFiles(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(proj, ".mcp.json"), `{"imports": ["codex"], "mcpServers": {"repo": {"url": "https://r.example/mcp"}}}`)
	var c Cache
	o := Options{Home: home, Cwd: proj}
	g1, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if g1.FullBlock() {
		t.Fatalf("unexpected block: %+v", g1.Blocks)
	}
	g2, _ := c.Get(o)
	if g1 != g2 {
		t.Fatal("unchanged files: the cached gate was not reused")
	}
	// A newly created, unreadable codex file the project imports blocks at once.
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), "[mcp_servers\n")
	g3, _ := c.Get(o)
	if g3 == g2 || !g3.FullBlock() {
		t.Fatalf("new import target not seen: reused=%v blocks=%v", g3 == g2, g3.Blocks)
	}
	// directTools added to the user's own global file is seen immediately.
	os.Remove(filepath.Join(home, ".codex", "config.toml"))
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"settings": {"directTools": true, "toolPrefix": "none"}}`)
	g4, _ := c.Get(o)
	if !g4.FullBlock() || g4.Blocks[0].Code != BlockDirectToolsNoPrefix {
		t.Fatalf("global settings change not seen: %+v", g4.Blocks)
	}
}

// benchProject lays out a home and project with n servers split across the
// global and project layers.
func benchProject(b testing.TB, n int) (home, proj string) {
	home, proj = b.TempDir(), b.TempDir()
	var global, repo strings.Builder
	global.WriteString(`{"mcpServers": {`)
	repo.WriteString(`{"mcpServers": {`)
	for i := 0; i < n; i++ {
		w, sep := &global, i > 1
		if i%2 == 1 {
			w, sep = &repo, i > 1
		}
		if sep {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `"srv-%d": {"command": "node", "args": ["server-%d.js", "--port", "%d"], "env": {"TOKEN": "${TOKEN_%d}"}}`, i, i, i, i)
	}
	global.WriteString("}}")
	repo.WriteString("}}")
	writeFile(b, filepath.Join(home, ".config", "mcp", "mcp.json"), global.String())
	writeFile(b, filepath.Join(proj, ".mcp.json"), repo.String())
	return home, proj
}

// BenchmarkSignatureValid is the check that validates a cached gate.
func BenchmarkSignatureValid(b *testing.B) {
	home, proj := benchProject(b, 10)
	g, err := load(Options{Home: home, Cwd: proj}, true)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ReportMetric(float64(len(g.Signature)), "paths")
	for b.Loop() {
		if !g.Signature.Valid() {
			b.Fatal("signature changed")
		}
	}
}

// BenchmarkCompute1000 is a full recompute (read, merge, digest, states)
// for a project with 1,000 servers.
func BenchmarkCompute1000(b *testing.B) {
	home, proj := benchProject(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		g, err := Load(Options{Home: home, Cwd: proj})
		if err != nil || len(g.Servers) != 1000 {
			b.Fatalf("servers=%d err=%v", len(g.Servers), err)
		}
	}
}

// TestCacheWatch: the watch that lets a cached gate skip its stats misses
// nothing the stats would see: a folder created on the way to a missing
// file and then the file, a file rewritten, and a symbolic link on the way
// retargeted.
func TestCacheWatch(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	real1, real2 := filepath.Join(root, "real1"), filepath.Join(root, "real2")
	writeFile(t, filepath.Join(real1, ".mcp.json"), `{"imports": ["cursor"], "mcpServers": {"one": {"url": "https://one.example/mcp"}}}`)
	writeFile(t, filepath.Join(real2, ".mcp.json"), `{"mcpServers": {"two": {"url": "https://two.example/mcp"}}}`)
	os.MkdirAll(home, 0o755)
	proj := filepath.Join(root, "proj")
	if err := os.Symlink(real1, proj); err != nil {
		t.Fatal(err)
	}
	var c Cache
	o := Options{Home: home, Cwd: proj}
	names := func() string {
		g, err := c.Get(o)
		if err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, s := range g.Servers {
			ns = append(ns, s.Name)
		}
		return strings.Join(ns, ",")
	}
	if got := names(); got != "one" {
		t.Fatalf("servers %q", got)
	}
	g1, _ := c.Get(o)
	// A folder appears on the way to ~/.cursor/mcp.json: nothing the gate
	// read changed, so it is kept...
	os.Mkdir(filepath.Join(home, ".cursor"), 0o755)
	if g2, _ := c.Get(o); g2 != g1 {
		t.Fatal("an empty new folder recomputed the gate")
	}
	// ...and the file created in it afterwards is seen.
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"planted": {"command": "sh"}}}`)
	if got := names(); got != "one,planted" {
		t.Fatalf("a file in a folder created after the gate was not seen: %q", got)
	}
	// A rewrite of a file the gate read.
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"planted2": {"command": "sh"}}}`)
	if got := names(); got != "one,planted2" {
		t.Fatalf("a rewritten file was not seen: %q", got)
	}
	// The project folder, a link, now points elsewhere.
	os.Remove(proj)
	if err := os.Symlink(real2, proj); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "two" {
		t.Fatalf("a retargeted link on the way was not seen: %q", got)
	}
}

// TestCacheWatchAncestorRenamed: the folder of a consulted file moved away
// and rebuilt with a new file is seen (the watch on the old folder follows
// it away and says nothing).
func TestCacheWatchAncestorRenamed(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"mcpServers": {"mine": {"url": "https://mine.example/mcp"}}}`)
	writeFile(t, filepath.Join(proj, "README.md"), "x")
	// every other folder the readers look in under ~/.config exists, so
	// none of their missing files has ~/.config watched in its stead
	for _, d := range []string{"opencode", "Claude", "piagent"} {
		os.MkdirAll(filepath.Join(home, ".config", d), 0o755)
	}
	var c Cache
	o := Options{Home: home, Cwd: proj}
	g1, err := c.Get(o)
	if err != nil || len(g1.Servers) != 1 {
		t.Fatalf("servers %d, %v", len(g1.Servers), err)
	}
	if err := os.Rename(filepath.Join(home, ".config", "mcp"), filepath.Join(home, ".config", "mcp.old")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".config", "mcp", "mcp.json"), `{"mcpServers": {"planted": {"command": "sh"}}}`)
	g2, _ := c.Get(o)
	if len(g2.Servers) != 1 || g2.Servers[0].Name != "planted" {
		t.Fatalf("after ~/.config/mcp was moved away and rebuilt: %d servers, first %q", len(g2.Servers), g2.Servers[0].Name)
	}
}

// TestCacheWatchGrandparentRenamed: a folder two levels above a consulted
// file moved away and rebuilt with a new file is seen.
func TestCacheWatchGrandparentRenamed(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	deep := filepath.Join(root, "far", "a", "b", "file.json")
	writeFile(t, deep, "1")
	writeFile(t, filepath.Join(proj, "README.md"), "x")
	os.MkdirAll(home, 0o755)
	var c Cache
	o := Options{Home: home, Cwd: proj, Extra: []string{deep}}
	g1, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if g2, _ := c.Get(o); g2 != g1 {
		t.Fatal("not reused")
	}
	os.Rename(filepath.Join(root, "far", "a"), filepath.Join(root, "far", "a.old"))
	writeFile(t, deep, "2")
	if g3, _ := c.Get(o); g3 == g1 {
		t.Fatal("a file under a folder rebuilt two levels up was not seen")
	}
}

// TestCacheWatchLinkedFile: a consulted file that is a link to a file
// elsewhere; the target rewritten is seen.
func TestCacheWatchLinkedFile(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	target := filepath.Join(root, "dotfiles", "mcp.json")
	writeFile(t, target, `{"mcpServers": {"one": {"url": "https://one.example/mcp"}}}`)
	os.MkdirAll(filepath.Join(home, ".config", "mcp"), 0o755)
	writeFile(t, filepath.Join(proj, "README.md"), "x")
	if err := os.Symlink(target, filepath.Join(home, ".config", "mcp", "mcp.json")); err != nil {
		t.Fatal(err)
	}
	var c Cache
	o := Options{Home: home, Cwd: proj}
	if g, _ := c.Get(o); len(g.Servers) != 1 || g.Servers[0].Name != "one" {
		t.Fatalf("servers %v", g.Servers)
	}
	writeFile(t, target, `{"mcpServers": {"two": {"command": "sh"}}}`)
	if g, _ := c.Get(o); len(g.Servers) != 1 || g.Servers[0].Name != "two" {
		t.Fatalf("the link's target rewritten was not seen: %v", g.Servers[0].Name)
	}
}

// TestCacheWatchLinkedExtra: an extra watched path that is a link to a file
// in a folder nothing else watches; the target rewritten is seen.
func TestCacheWatchLinkedExtra(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	target := filepath.Join(root, "elsewhere", "deep", "hook")
	writeFile(t, target, "1")
	writeFile(t, filepath.Join(proj, "README.md"), "x")
	os.MkdirAll(home, 0o755)
	link := filepath.Join(proj, "hook")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var c Cache
	o := Options{Home: home, Cwd: proj, Extra: []string{link}}
	g1, _ := c.Get(o)
	writeFile(t, target, "2 longer")
	if g2, _ := c.Get(o); g2 == g1 {
		t.Fatal("the link's target rewritten was not seen")
	}
}

// BenchmarkGetAfterWrite is the cached gate's answer after an edit the
// agent made, the common case in a session (issue 46, item 1), beside the
// quiet answer: 10 servers, a write in the project root, and one in src/.
func BenchmarkGetAfterWrite(b *testing.B) {
	home, proj := benchProject(b, 10)
	writeFile(b, filepath.Join(proj, "src", "main.go"), "package main\n")
	o := Options{Home: home, Cwd: proj}
	var c Cache
	if _, err := c.Get(o); err != nil {
		b.Fatal(err)
	}
	b.Run("quiet", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Get(o); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, f := range []string{"README.md", filepath.Join("src", "main.go")} {
		p := filepath.Join(proj, f)
		b.Run(strings.ReplaceAll(f, "/", "-"), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				if err := os.WriteFile(p, fmt.Appendf(nil, "edit %d\n", i), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := c.Get(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Issue 46, item 1: a write beside what the gate read answers from the
// cache with the watch kept armed, and a change after it is still seen:
// the .mcp.json, and a file created under a folder that appears later on
// the way to a missing path.
func TestCacheAfterUnrelatedWrite(t *testing.T) {
	home, proj := benchProject(t, 4)
	o := Options{Home: home, Cwd: proj}
	var c Cache
	g1, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proj, "README.md"), "edit\n")
	writeFile(t, filepath.Join(proj, "README.md"), "edit again\n")
	if g2, _ := c.Get(o); g2 != g1 {
		t.Error("a write beside the files the gate read recomputed it")
	}
	writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers": {"only": {"command": "x"}}}`)
	g3, _ := c.Get(o)
	if g3 == g1 {
		t.Fatal("the .mcp.json rewritten after an unrelated write: not seen")
	}
	if _, ok := g3.Server("only"); !ok {
		t.Errorf("the new definition is not in the gate")
	}
	writeFile(t, filepath.Join(proj, "notes.txt"), "x")
	if g4, _ := c.Get(o); g4 != g3 {
		t.Error("a write beside the files the gate read recomputed it")
	}
	// a folder made beside them, on the way to nothing the gate read:
	// neither a recomputation nor a new watch (the watch still sees what
	// follows)
	if err := os.Mkdir(filepath.Join(proj, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := c.gates[cacheKey{o.Home, o.Cwd, o.ConfigPath}].w
	if g, _ := c.Get(o); g != g3 || c.gates[cacheKey{o.Home, o.Cwd, o.ConfigPath}].w != w {
		t.Error("a folder beside the files the gate read recomputed it or its watch")
	}
	// .pi/mcp.json is missing and so is .pi: a folder that appears (the
	// gate stays valid, the watch must grow), then the file in it
	if err := os.Mkdir(filepath.Join(proj, ".pi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if g, _ := c.Get(o); g != g3 {
		t.Error("an empty folder recomputed the gate")
	}
	writeFile(t, filepath.Join(proj, ".pi", "mcp.json"), `{"mcpServers": {"pi-side": {"command": "y"}}}`)
	g5, _ := c.Get(o)
	if _, ok := g5.Server("pi-side"); !ok {
		t.Errorf("a file under a folder that appeared after the watch was made: not seen")
	}
}

// TestCacheWriteWhileLoading: a load reads the files, then stamps them. A
// definition rewritten between the two left the new stamp beside the old
// content: the watch, made after, saw nothing, the stamps were equal, and
// every later Get kept the gate judged on the definition that was no longer
// there (a changed server kept the old one's approval). Now a stamp changed
// since the load began sends it to load again.
func TestCacheWriteWhileLoading(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	cfg := filepath.Join(proj, ".mcp.json")
	writeFile(t, cfg, `{"mcpServers": {"repo": {"url": "https://old.example/mcp"}}}`)
	time.Sleep(2 * clockTick) // the first write is older than any load
	t.Cleanup(func() { afterRead = nil })
	afterRead = func() {
		afterRead = nil
		writeFile(t, cfg, `{"mcpServers": {"repo": {"url": "https://new.example/mcp"}}}`)
	}
	var c Cache
	o := Options{Home: home, Cwd: proj}
	url := func() any {
		g, err := c.Get(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range g.Servers {
			if s.Name == "repo" {
				return s.Config.Entry["url"]
			}
		}
		t.Fatal("no server repo")
		return nil
	}
	url() // the write lands between this load's reading and its stamps
	for i := range 3 {
		if got := url(); got != "https://new.example/mcp" {
			t.Fatalf("Get %d after the write: the gate judges url %v", i+1, got)
		}
	}
}
