package fswatch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWatch(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify")
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	f := filepath.Join(dir, "a.json")
	os.WriteFile(f, []byte("{}"), 0o644)
	w := New()
	if w == nil {
		t.Skip("no inotify here")
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	if w.Changed() {
		t.Fatal("changed before anything happened")
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"write", func() { os.WriteFile(f, []byte(`{"x":1}`), 0o644) }},
		{"chmod", func() { os.Chmod(f, 0o600) }},
		{"create", func() { os.WriteFile(filepath.Join(dir, "b"), nil, 0o644) }},
		{"rename", func() { os.Rename(filepath.Join(dir, "b"), filepath.Join(dir, "c")) }},
		{"remove", func() { os.Remove(filepath.Join(dir, "c")) }},
		{"symlink", func() { os.Symlink("/etc/passwd", filepath.Join(dir, "l")) }},
	}
	for _, s := range steps {
		s.do()
		if !w.Changed() {
			t.Errorf("%s was not seen", s.name)
		}
		if w.Changed() {
			t.Errorf("after %s, the events were not drained", s.name)
		}
	}
	// a write below a watched folder's child is not this watch's business
	os.WriteFile(filepath.Join(sub, "x"), nil, 0o644)
	w.Changed() // the folder's own times may or may not be reported
	if err := w.Add(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder was watched")
	}
	if w.Changed() {
		t.Error("a failed Add of a missing folder broke the watch")
	}
	// the watched folder itself moving away
	os.Rename(dir, dir+".moved")
	defer os.Rename(dir+".moved", dir)
	if !w.Changed() {
		t.Error("the watched folder moving away was not seen")
	}
	var nilw *Watch
	if !nilw.Changed() {
		t.Error("a nil watch must report a change")
	}
}
