package gate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSnapFS: a listed folder answers for names it does not hold, and
// whatever it does hold is stat'ed for real, links followed.
func TestSnapFS(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.js"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "pkg"), 0o755)
	os.Symlink(filepath.Join(dir, "pkg"), filepath.Join(dir, "link"))
	f := newSnapFS(0)
	for i := range listAfter + 2 {
		if _, err := f.Stat(filepath.Join(dir, "missing-"+string(rune('a'+i)))); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("missing name: %v", err)
		}
	}
	if fi, err := f.Stat(filepath.Join(dir, "a.js")); err != nil || fi.Size() != 1 {
		t.Fatalf("a.js after the listing: %v %v", fi, err)
	}
	if fi, err := f.Stat(filepath.Join(dir, "link")); err != nil || !fi.IsDir() {
		t.Fatalf("a link to a folder: %v %v", fi, err)
	}
	if _, err := f.Stat(filepath.Join(dir, "pkg", "deeper")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a name below: %v", err)
	}
	data, err := f.ReadFile(filepath.Join(dir, "a.js"))
	os.WriteFile(filepath.Join(dir, "a.js"), []byte("changed"), 0o644)
	again, _ := f.ReadFile(filepath.Join(dir, "a.js"))
	if err != nil || string(data) != "x" || string(again) != "x" {
		t.Fatalf("one computation reads a file once: %q then %q (%v)", data, again, err)
	}
}
