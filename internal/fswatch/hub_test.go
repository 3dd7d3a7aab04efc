package fswatch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestHub: watches sharing one instance each see the events of their own
// folders, whichever of them reads the instance first, and lose nothing
// when another closes; a watch of a folder another also watches names it
// as it added it.
func TestHub(t *testing.T) {
	h := testHub(t)
	dir, other := t.TempDir(), t.TempDir()
	f := filepath.Join(dir, "x.js")
	os.WriteFile(f, []byte("1"), 0o644)
	a, b, c := h.Watch(), h.Watch(), h.Watch()
	for _, add := range []struct {
		w   *Watch
		dir string
	}{{a, dir}, {b, dir}, {c, other}} {
		if err := add.w.Add(add.dir); err != nil {
			t.Fatal(err)
		}
	}
	if a.Fd() != b.Fd() || a.Fd() != c.Fd() || a.Fd() < 0 {
		t.Fatalf("descriptors %d %d %d: not one instance", a.Fd(), b.Fd(), c.Fd())
	}
	// one event (a chmod): a reads the instance; b finds it waiting; c
	// has none
	os.Chmod(f, 0o600)
	if _, _, _, names := a.Drain(); !slices.Contains(names, f) {
		t.Fatalf("a: names %v, want %s", names, f)
	}
	if changed, _, lost, names := b.Drain(); !changed || lost || !slices.Contains(names, f) {
		t.Fatalf("b after a read the instance: changed %v lost %v names %v", changed, lost, names)
	}
	if changed(c) || changed(a) || changed(b) {
		t.Fatal("events reported twice, or to a watch of another folder")
	}
	// b closed: a still watches dir (the folder's watch is kept)
	b.Close()
	os.WriteFile(f, []byte("2"), 0o644)
	if _, _, lost, names := a.Drain(); lost || !slices.Contains(names, f) {
		t.Fatalf("a after b closed: lost %v names %v", lost, names)
	}
	// a closed too: dir is no longer watched, and c is undisturbed
	a.Close()
	os.WriteFile(f, []byte("3"), 0o644)
	g := filepath.Join(other, "y.js")
	os.WriteFile(g, []byte("1"), 0o644)
	if changed, _, lost, names := c.Drain(); !changed || lost || !slices.Equal(slices.Compact(names), []string{g}) {
		t.Fatalf("c after a and b closed: changed %v lost %v names %v", changed, lost, names)
	}
	// and the kernel keeps one watch, other's (the instance's count per
	// user is limited: fs.inotify.max_user_watches)
	if n := kernelWatches(t, c.Fd()); n != 1 {
		t.Fatalf("%d watches in the kernel after a and b closed, want 1", n)
	}
	// a folder another watch holds, removed: lost for its watch alone
	d := h.Watch()
	sub := filepath.Join(other, "sub")
	os.Mkdir(sub, 0o755)
	if err := d.Add(sub); err != nil {
		t.Fatal(err)
	}
	c.Drain()
	os.Remove(sub)
	if _, _, lost, _ := d.Drain(); !lost {
		t.Fatal("d's folder removed: not lost")
	}
	if _, folders, lost, _ := c.Drain(); lost || !folders {
		t.Fatalf("c saw a folder removed beside it: folders %v lost %v", folders, lost)
	}
}

// TestHubOneRead: a drain of many events that fill more than one read
// still gets them all (the short read that ends a drain is only short
// when the queue is empty).
func TestHubOneRead(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	w := watchIn(t, h, dir)
	var want []string
	for i := range 300 { // 300 files, two 48-byte events each: more than one read
		p := filepath.Join(dir, fmt.Sprintf("f%03d-%s", i, "padding-padding"))
		os.WriteFile(p, nil, 0o644)
		want = append(want, p)
	}
	_, _, lost, names := w.Drain()
	names = slices.Compact(names)
	if lost || !slices.Equal(names, want) {
		t.Fatalf("lost %v, %d names, want %d", lost, len(names), len(want))
	}
}

// TestHubHardLinked: the answer for a name is kept between reads that
// find nothing, and asked again after one that finds events (a link made
// to the file is an event on its name).
func TestHubHardLinked(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	w := watchIn(t, h, dir)
	f := filepath.Join(dir, "a.js")
	os.WriteFile(f, []byte("1"), 0o644)
	w.Drain()
	if w.HardLinked([]string{f}) {
		t.Fatal("one name: linked")
	}
	if err := os.Link(f, filepath.Join(dir, "second")); err != nil {
		t.Fatal(err)
	}
	w.Drain()
	if !w.HardLinked([]string{f}) {
		t.Fatal("a second name made: not linked (an answer kept past an event)")
	}
	if !w.HardLinked([]string{filepath.Join(dir, "gone")}) {
		t.Fatal("a name that is gone: not linked")
	}
	var nilw *Watch
	if !nilw.HardLinked([]string{f}) {
		t.Fatal("a nil watch: not linked")
	}
}

// kernelWatches counts the watches the kernel holds for an instance.
func kernelWatches(t *testing.T, fd int) int {
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		t.Skip(err)
	}
	return strings.Count(string(info), "inotify wd:")
}

// TestHubBatch: between Begin and End the instance is read by the first
// drain alone: a write before it reaches every watch, one after it waits
// for the next batch (or for End, after which every drain reads again).
func TestHubBatch(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	a, b := watchIn(t, h, dir), watchIn(t, h, dir)
	f, g := filepath.Join(dir, "before.js"), filepath.Join(dir, "after.js")
	os.WriteFile(f, nil, 0o644)
	h.Begin()
	if _, _, _, names := a.Drain(); !slices.Contains(names, f) {
		t.Fatalf("a, first in the batch: %v", names)
	}
	os.WriteFile(g, nil, 0o644)
	if _, _, _, names := b.Drain(); !slices.Contains(names, f) || slices.Contains(names, g) {
		t.Fatalf("b, second in the batch: %v, want %s alone (the instance read once)", names, f)
	}
	h.End()
	if _, _, _, names := b.Drain(); !slices.Contains(names, g) {
		t.Fatalf("b after End: %v, want %s", names, g)
	}
	if _, _, _, names := a.Drain(); !slices.Contains(names, g) {
		t.Fatalf("a after End: %v, want %s", names, g)
	}
	// a new batch reads again at its first drain
	os.WriteFile(f, []byte("x"), 0o644)
	h.Begin()
	defer h.End()
	if _, _, _, names := b.Drain(); !slices.Contains(names, f) {
		t.Fatalf("b, first in a new batch: %v", names)
	}
}

// TestEntries: a drain says whether an entry was made, removed or renamed
// (a folder's own stamp changed), or only contents and attributes were.
func TestEntries(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "a.js")
	os.WriteFile(f, nil, 0o644)
	w := watchIn(t, h, dir)
	for _, step := range []struct {
		name string
		do   func()
		want bool
	}{
		{"write", func() { os.WriteFile(f, []byte("1"), 0o644) }, false},
		{"chmod", func() { os.Chmod(f, 0o600) }, false},
		{"create", func() { os.WriteFile(filepath.Join(dir, "b.js"), nil, 0o644) }, true},
		{"write again", func() { os.WriteFile(f, []byte("2"), 0o644) }, false},
		{"rename", func() { os.Rename(filepath.Join(dir, "b.js"), filepath.Join(dir, "c.js")) }, true},
		{"hard link", func() { os.Link(f, filepath.Join(dir, "d.js")) }, true},
		{"remove", func() { os.Remove(filepath.Join(dir, "d.js")) }, true},
		{"folder made", func() { os.Mkdir(filepath.Join(dir, "sub"), 0o755) }, true},
	} {
		step.do()
		if changed, _, _, _ := w.Drain(); !changed {
			t.Fatalf("%s: not seen", step.name)
		}
		if got := w.Entries(); got != step.want {
			t.Errorf("%s: Entries %v, want %v", step.name, got, step.want)
		}
	}
	var nilw *Watch
	if !nilw.Entries() {
		t.Error("a nil watch: no entries changed")
	}
}

// TestHubClosed: after the hub is closed its descriptor is forgotten (the
// number may be another file's next): a watch of it reports lost, and one
// added after cannot watch and reports a change on every drain.
func TestHubClosed(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	a := watchIn(t, h, dir)
	h.Close()
	// another instance likely takes the number the hub had
	other := NewHub()
	defer other.Close()
	if _, _, lost, _ := a.Drain(); !lost {
		t.Fatal("a watch of a closed hub: not lost")
	}
	b := h.Watch()
	b.Add(dir)
	if a.Fd() != -1 || b.Fd() != -1 {
		t.Fatalf("descriptors after Close: %d %d, want -1", a.Fd(), b.Fd())
	}
	for range 2 {
		if changed, _, lost, _ := b.Drain(); !changed || !lost {
			t.Fatalf("a watch added after Close: changed %v lost %v", changed, lost)
		}
	}
}

// testHub returns a shared instance, closed at the test's end; the test
// is skipped where there is none.
func testHub(t *testing.T) *Hub {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("inotify")
	}
	h := NewHub()
	if h == nil {
		t.Skip("no inotify here")
	}
	t.Cleanup(h.Close)
	return h
}

// watchIn returns a watch of dir in h.
func watchIn(t *testing.T, h *Hub, dir string) *Watch {
	t.Helper()
	w := h.Watch()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestFolders: a drain names the folders made, moved or removed apart
// from the files beside them.
func TestFolders(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	w := watchIn(t, h, dir)
	f, sub := filepath.Join(dir, "a.js"), filepath.Join(dir, "sub")
	os.WriteFile(f, nil, 0o644)
	os.Mkdir(sub, 0o755)
	_, folders, _, names := w.Drain()
	if !folders || !slices.Equal(w.Folders(), []string{sub}) || !slices.Contains(names, f) {
		t.Fatalf("folders %v %q, names %q", folders, w.Folders(), names)
	}
	os.WriteFile(f, []byte("x"), 0o644)
	if _, folders, _, _ := w.Drain(); folders || len(w.Folders()) > 0 {
		t.Fatalf("a file's write: folders %v %q", folders, w.Folders())
	}
	var nilw *Watch
	if nilw.Folders() != nil {
		t.Fatal("a nil watch named folders")
	}
}
