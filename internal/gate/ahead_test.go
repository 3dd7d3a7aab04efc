package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAheadLeavesSlowWay: Cache.Ahead, run between calls, answers an edit
// of a pinned file as Get would (the next Get finds nothing to drain and
// returns that gate), but leaves a configuration file's change to the next
// Get, which checks the slow way and sees it: Ahead never loads.
func TestAheadLeavesSlowWay(t *testing.T) {
	home, proj := treeProject(t, 5)
	o := Options{Home: home, Cwd: proj}
	var c Cache
	if g := c.Ahead(o); g != nil {
		t.Fatal("Ahead answered with nothing cached")
	}
	g0, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g0.Server("custom"); s.State != Ready {
		t.Fatalf("control: %s %s", s.State, s.Reason)
	}
	if len(c.Watches(nil)) == 0 {
		// inotify's instances are counted per user: processes beside
		// this one may hold them all
		t.Skip("no watch could be made (fs.inotify.max_user_instances)")
	}
	file := filepath.Join(proj, "app", "src", "d000", "f00002.js")
	os.WriteFile(file, []byte("// changed\n"), 0o755)
	g1 := c.Ahead(o)
	if g1 == nil || g1 == g0 {
		t.Fatalf("an edit of a pinned file was not answered ahead: %v", g1)
	}
	if s, _ := g1.Server("custom"); s.State != ApprovalChanged {
		t.Fatalf("after the edit, ahead: %s", s.State)
	}
	// (events of others' folders in the shared /tmp above the project may
	// come between: the next Get drains them, and keeps g1)
	if g, _ := c.Get(o); g != g1 {
		t.Fatal("the next Get did the work again")
	}
	// a definition changed: left to Get
	def := filepath.Join(proj, ".mcp.json")
	data, _ := os.ReadFile(def)
	os.WriteFile(def, []byte(strings.Replace(string(data), `"cwd"`, `"args":["--x"],"cwd"`, 1)), 0o644)
	if g := c.Ahead(o); g != nil {
		t.Fatal("Ahead answered a configuration file's change")
	}
	if g := c.Ahead(o); g != nil {
		t.Fatal("Ahead answered while the slow way is pending")
	}
	g2, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g2.Server("custom"); g2 == g1 || s.State == Ready {
		t.Fatalf("the definition's change was not seen: %s", s.State)
	}
}

// TestAheadFolderBeside: a folder made beside the project (a test's in
// /tmp, a build's) in the same drain as an edit of a pinned file leaves
// the edit answered ahead: only a folder on the way to what the gate read
// sends it the slow way, not a file it read named beside the folder.
func TestAheadFolderBeside(t *testing.T) {
	home, proj := treeProject(t, 5)
	o := Options{Home: home, Cwd: proj}
	var c Cache
	g0, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Watches(nil)) == 0 {
		t.Skip("no watch could be made (fs.inotify.max_user_instances)")
	}
	os.Mkdir(filepath.Join(filepath.Dir(proj), "beside"), 0o755)
	os.WriteFile(filepath.Join(proj, "app", "src", "d000", "f00002.js"), []byte("// changed\n"), 0o755)
	g1 := c.Ahead(o)
	if g1 == nil || g1 == g0 {
		t.Fatalf("an edit of a pinned file beside a new folder was not answered ahead: %v", g1)
	}
	if s, _ := g1.Server("custom"); s.State != ApprovalChanged {
		t.Fatalf("after the edit, ahead: %s", s.State)
	}
}
