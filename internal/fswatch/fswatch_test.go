package fswatch

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
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
	if changed(w) {
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
		if !changed(w) {
			t.Errorf("%s was not seen", s.name)
		}
		if changed(w) {
			t.Errorf("after %s, the events were not drained", s.name)
		}
	}
	// a write below a watched folder's child is not this watch's business
	os.WriteFile(filepath.Join(sub, "x"), nil, 0o644)
	changed(w) // the folder's own times may or may not be reported
	if err := w.Add(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder was watched")
	}
	if changed(w) {
		t.Error("a failed Add of a missing folder broke the watch")
	}
	// the watched folder itself moving away
	os.Rename(dir, dir+".moved")
	defer os.Rename(dir+".moved", dir)
	if !changed(w) {
		t.Error("the watched folder moving away was not seen")
	}
	var nilw *Watch
	if !changed(nilw) {
		t.Error("a nil watch must report a change")
	}
}

// TestDrainNames: Drain names the entry each event was about (a write, a
// chmod, a removal), without a shape change; a folder created is a shape
// change.
func TestDrainNames(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify")
	}
	dir := t.TempDir()
	f, g := filepath.Join(dir, "a.js"), filepath.Join(dir, "b.js")
	os.WriteFile(f, []byte("1"), 0o644)
	os.WriteFile(g, []byte("1"), 0o644)
	w := New()
	if w == nil {
		t.Skip("no inotify here")
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name string
		do   func()
		want string
	}{
		{"write", func() { os.WriteFile(f, []byte("2"), 0o644) }, f},
		{"chmod", func() { os.Chmod(g, 0o755) }, g},
		{"remove", func() { os.Remove(g) }, g},
	} {
		step.do()
		changed, folders, lost, names := w.Drain()
		shape := folders || lost
		if !changed || shape || len(names) == 0 {
			t.Fatalf("%s: changed %v shape %v names %v", step.name, changed, shape, names)
		}
		for _, n := range names {
			if n != step.want {
				t.Errorf("%s: named %s, want only %s", step.name, n, step.want)
			}
		}
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if changed, folders, _, _ := w.Drain(); !changed || !folders {
		t.Fatalf("a folder created: changed %v folders %v", changed, folders)
	}
	if changed, _, _, names := w.Drain(); changed || len(names) > 0 {
		t.Fatalf("drained twice: changed %v names %v", changed, names)
	}
	// Drain names a folder made, moved or removed, and says it was one
	sub := filepath.Join(dir, "sub2")
	os.Mkdir(sub, 0o755)
	os.Rename(sub, sub+"x")
	os.Remove(sub + "x")
	changed, folders, lost, names := w.Drain()
	if !changed || !folders || lost || !slices.Equal(names, []string{sub, sub, sub + "x", sub + "x"}) {
		t.Fatalf("folders: changed %v folders %v lost %v names %v", changed, folders, lost, names)
	}
	// a watched folder removed: what follows cannot be named
	os.RemoveAll(dir)
	if _, _, lost, _ := w.Drain(); !lost {
		t.Fatal("the watched folder removed: not lost")
	}
}

// changed drains w and reports whether there were events.
func changed(w *Watch) bool {
	c, _, _, _ := w.Drain()
	return c
}

// TestWaiter: Wait reports a watch with events without reading them (the
// caller's Drain still finds them), times out when there are none, and
// ends early on Wake.
func TestWaiter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify")
	}
	dir := t.TempDir()
	w := New()
	if w == nil {
		t.Skip("no inotify here")
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	wt, err := NewWaiter()
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	fds := []int{w.Fd(), -1}
	start := time.Now()
	if ready, err := wt.Wait(fds, 50*time.Millisecond); ready || err != nil {
		t.Fatalf("nothing happened: ready %v err %v", ready, err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("returned after %v, before its timeout", d)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	for range 2 { // twice: the wait reads nothing
		if ready, err := wt.Wait(fds, time.Second); !ready || err != nil {
			t.Fatalf("a write: ready %v err %v", ready, err)
		}
	}
	if !changed(w) {
		t.Fatal("the events were taken by the wait")
	}
	done := make(chan bool)
	go func() {
		ready, _ := wt.Wait(fds, 10*time.Second)
		done <- ready
	}()
	time.Sleep(20 * time.Millisecond)
	wt.Wake()
	select {
	case ready := <-done:
		if ready {
			t.Fatal("a wake read as events")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wake did not end the wait")
	}
	// the wake was taken: the next wait waits
	if ready, _ := wt.Wait(fds, 20*time.Millisecond); ready {
		t.Fatal("ready with nothing pending")
	}
	var nilw *Watch
	if nilw.Fd() != -1 {
		t.Fatal("a nil watch has a descriptor")
	}
}
