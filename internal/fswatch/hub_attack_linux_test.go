package fswatch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
	"testing"
)

// Review of the shared instance (345dbbb): attacks on the promise that a
// write before a drain is in that drain (or the drain says lost), for
// every watch of a hub, whatever the others did.

// seen reports whether a drain of w saw name (or said lost).
func seen(w *Watch, name string) bool {
	changed, _, lost, names := w.Drain()
	return changed && (lost || slices.Contains(names, name))
}

// TestHubAttackReWatch: one consumer closes its watch of a folder another
// holds and watches it afresh (the gate after a folder change, the link
// cache past its limit), with events of both pending; a write before and
// after reaches both.
func TestHubAttackReWatch(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "server.js")
	a, b := h.Watch(), h.Watch()
	a.Add(dir)
	b.Add(dir)
	os.WriteFile(f, []byte("1"), 0o644) // pending for both, unread
	b.Close()
	b = h.Watch()
	if err := b.Add(dir); err != nil {
		t.Fatal(err)
	}
	if !seen(a, f) {
		t.Fatal("a: a write pending while b re-watched was missed")
	}
	os.WriteFile(f, []byte("2"), 0o644)
	if !seen(b, f) || !seen(a, f) {
		t.Fatal("a write after b re-watched was missed")
	}
	// both close and re-watch, in either order, with a write between
	for i := range 20 {
		os.WriteFile(f, []byte(fmt.Sprint(i)), 0o644)
		a.Close()
		a = h.Watch()
		a.Add(dir)
		os.WriteFile(f, []byte(fmt.Sprint(i, "b")), 0o644)
		b.Close()
		b = h.Watch()
		b.Add(dir)
		os.WriteFile(f, []byte(fmt.Sprint(i, "c")), 0o644)
		if !seen(a, f) || !seen(b, f) {
			t.Fatalf("round %d: a write after a re-watch was missed", i)
		}
	}
	a.Close()
	b.Close()
	if n := kernelWatches(t, h.fd); n != 0 {
		t.Fatalf("%d kernel watches left after every watch closed", n)
	}
}

// TestHubAttackSoleCloseReAdd: the only watch of a folder closes (the
// kernel watch is removed, its IN_IGNORED still queued, perhaps with
// events before it), and another watch adds the folder again: that
// watch's descriptor must not be taken for the removed one, and what is
// written after its Add is seen.
func TestHubAttackSoleCloseReAdd(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "pre-commit")
	for i := range 200 {
		a := h.Watch()
		a.Add(dir)
		os.WriteFile(f, []byte(fmt.Sprint(i)), 0o644) // unread at Close
		a.Close()
		b := h.Watch()
		if err := b.Add(dir); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(f, []byte(fmt.Sprint(i, "b")), 0o644)
		if !seen(b, f) {
			t.Fatalf("round %d: a write after the folder was watched again was missed", i)
		}
		b.Close()
	}
}

// TestHubAttackFolderReplaced: a watched folder removed and made again
// (IN_DELETE_SELF, IN_IGNORED) is lost for every watch of it, whichever
// drains first; a watch that adds the new folder sees writes in it, and
// the old descriptor's late events do not disturb it.
func TestHubAttackFolderReplaced(t *testing.T) {
	h := testHub(t)
	top := t.TempDir()
	hooks := filepath.Join(top, "hooks")
	os.Mkdir(hooks, 0o755)
	a, b, c := h.Watch(), h.Watch(), h.Watch()
	a.Add(hooks)
	b.Add(hooks)
	c.Add(top)
	os.RemoveAll(hooks)
	os.Mkdir(hooks, 0o755)
	// c drains first: the IN_IGNORED is read for a and b
	if _, folders, _, _ := c.Drain(); !folders {
		t.Fatal("c: the folder's removal not seen")
	}
	if _, _, lost, _ := a.Drain(); !lost {
		t.Fatal("a: its folder removed, not lost")
	}
	// b re-watches the new folder before draining; a does not
	if err := b.Add(hooks); err != nil {
		t.Fatal(err)
	}
	if _, _, lost, _ := b.Drain(); !lost {
		t.Fatal("b: its folder removed, not lost")
	}
	f := filepath.Join(hooks, "pre-commit")
	os.WriteFile(f, []byte("evil"), 0o755)
	if !seen(b, f) {
		t.Fatal("b: a hook written in the new folder was missed")
	}
	a.Close()
	os.WriteFile(f, []byte("evil2"), 0o755)
	if !seen(b, f) {
		t.Fatal("b: a's close removed b's watch of the new folder")
	}
}

// TestHubAttackOverflow: a queue that overflows is lost for every watch,
// those that did not read it included, and those whose folders saw none
// of the events.
func TestHubAttackOverflow(t *testing.T) {
	h := testHub(t)
	busy, quiet := t.TempDir(), t.TempDir()
	a, b, c := h.Watch(), h.Watch(), h.Watch()
	a.Add(busy)
	b.Add(quiet)
	c.Add(busy)
	max := 16384
	if data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		fmt.Sscan(strings.TrimSpace(string(data)), &max)
	}
	if max > 100000 {
		t.Skip("queue too long to overflow here")
	}
	g := filepath.Join(busy, "x")
	for i := 0; i < max+10; i++ {
		os.WriteFile(g, []byte{byte(i)}, 0o644) // several events each
	}
	// the write that matters, dropped by the kernel
	hook := filepath.Join(quiet, "hook")
	os.WriteFile(hook, []byte("1"), 0o644)
	if _, _, lost, _ := a.Drain(); !lost {
		t.Fatal("a: overflow not lost")
	}
	if changed, _, lost, names := b.Drain(); !(changed && (lost || slices.Contains(names, hook))) {
		t.Fatalf("b: a write dropped by an overflow another watch read: changed %v lost %v", changed, lost)
	}
	if _, _, lost, _ := c.Drain(); !lost {
		t.Fatal("c: overflow not lost")
	}
}

// TestHubAttackReadBoundary: events of every length, so that reads end
// at every distance from the buffer's end: one drain gets every name
// (the short read that ends a drain only when the queue is empty).
func TestHubAttackReadBoundary(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	w := h.Watch()
	w.Add(dir)
	for round := range 40 {
		var want []string
		// lengths cycling through 1..255, offset each round
		for i := range 60 {
			l := 1 + (round*37+i*53)%255
			name := fmt.Sprintf("%03d", i) + strings.Repeat("n", max(l-3, 0))
			if len(name) > 255 {
				name = name[:255]
			}
			p := filepath.Join(dir, name)
			os.WriteFile(p, nil, 0o644)
			want = append(want, p)
		}
		_, _, lost, names := w.Drain()
		if lost {
			continue
		}
		for _, p := range want {
			if !slices.Contains(names, p) {
				t.Fatalf("round %d: %s missing from one drain (%d names)", round, filepath.Base(p)[:3], len(names))
			}
			os.Remove(p)
		}
		w.Drain()
	}
}

// TestHubAttackHardLinkBetween: a name found plain by one watch's
// question, made a second name of another file before a second watch
// asks: the second must not be told plain. A link is made only by
// creating a name, an event in a watched folder; the test makes it
// with a rename over the name, and with link() beside it.
func TestHubAttackHardLinkBetween(t *testing.T) {
	h := testHub(t)
	proj, hooks := t.TempDir(), t.TempDir()
	gate, session := h.Watch(), h.Watch()
	gate.Add(proj)
	session.Add(proj)
	session.Add(hooks)
	hook := filepath.Join(hooks, "pre-commit")
	os.WriteFile(hook, []byte("ok"), 0o755)
	gate.Drain()
	session.Drain()
	n := filepath.Join(proj, "notes.txt")
	os.WriteFile(n, []byte("1"), 0o644)
	gate.Drain()
	if gate.HardLinked([]string{n}) {
		t.Fatal("plain file: linked")
	}
	// notes.txt becomes a second name of the hook, then is written
	tmp := filepath.Join(proj, ".tmp")
	os.Link(hook, tmp)
	os.Rename(tmp, n)
	os.WriteFile(n, []byte("evil"), 0o644)
	_, _, _, names := session.Drain()
	if !session.HardLinked(names) {
		t.Fatal("session: told plain after the name became a link (a stale answer)")
	}
	// the gate, asking again after its own drain, too
	gate.Drain()
	if !gate.HardLinked([]string{n}) {
		t.Fatal("gate: told plain after the name became a link")
	}
	// link() from an unwatched folder: no event here; the memo must at
	// least be no worse than the kernel's events allow
	os.Remove(n)
	os.WriteFile(n, []byte("2"), 0o644)
	gate.Drain()
	if gate.HardLinked([]string{n}) {
		t.Fatal("plain again: linked")
	}
	outside := t.TempDir()
	os.Link(n, filepath.Join(outside, "x"))
	os.WriteFile(n, []byte("3"), 0o644) // written through the watched name
	_, _, _, names = session.Drain()
	if !slices.Contains(names, n) || !session.HardLinked(names) {
		t.Fatalf("session: a linked name written through, told plain (names %v)", names)
	}
}

// TestHubAttackConcurrent: a writer and drains of every watch at once,
// one of them closing and re-watching now and then (run with -race): a
// file made before a drain began is in that drain or an earlier one of
// the same watch (or the drain says lost).
func TestHubAttackConcurrent(t *testing.T) {
	h := testHub(t)
	dir := t.TempDir()
	const nw = 3
	ws := make([]*Watch, nw)
	for i := range ws {
		ws[i] = h.Watch()
		ws[i].Add(dir)
	}
	var mu sync.Mutex
	pending := make([]map[string]bool, nw)
	for i := range pending {
		pending[i] = map[string]bool{}
	}
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		for i := 0; i < 20000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(dir, fmt.Sprintf("f%d", i))
			os.WriteFile(p, nil, 0o644)
			mu.Lock()
			for j := range pending {
				pending[j][p] = true
			}
			mu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan string, nw)
	for j := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			everSeen := map[string]bool{}
			for k := 0; k < 400; k++ {
				mu.Lock()
				must := make([]string, 0, len(pending[j]))
				for p := range pending[j] {
					must = append(must, p)
				}
				clear(pending[j])
				mu.Unlock()
				_, _, lost, names := ws[j].Drain()
				for _, n := range names {
					everSeen[n] = true
				}
				if lost {
					continue
				}
				for _, p := range must {
					if !everSeen[p] {
						errs <- fmt.Sprintf("watch %d, drain %d: %s made before the drain, never seen", j, k, filepath.Base(p))
						return
					}
				}
				if j == 0 && k%40 == 39 {
					// re-watch: what came before the new Add is no longer owed
					mu.Lock()
					ws[j].Close()
					ws[j] = h.Watch()
					ws[j].Add(dir)
					clear(pending[j])
					mu.Unlock()
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(stop)
	writer.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestHubAttackLongNames: on a file system whose names may be longer than
// 255 bytes (FUSE: sshfs, ntfs-3g, virtiofs; exfat, vfat and ntfs3 take
// 255 UTF-16 units, up to 765 bytes), an event is larger than maxEvent. A
// read the next event did not fit into can then leave more than maxEvent
// bytes of room: the drain ends with events still queued, and a write to
// a pinned file made after the long name is not in the drain that follows
// it, which says neither changed-there nor lost.
func TestHubAttackLongNames(t *testing.T) {
	h := testHub(t)
	m := mountFuse(t)
	dir := m.dir
	pinned := filepath.Join(dir, "server.js")
	if err := writeRaw(pinned, []byte("ok"), 0o644); err != nil {
		t.Skipf("the FUSE folder cannot be written: %v", err)
	}
	w := h.Watch()
	if err := w.Add(dir); err != nil {
		t.Skipf("inotify on FUSE: %v", err)
	}
	w.Drain()
	long := strings.Repeat("L", 1000) // an event of 16+1008 bytes
	if err := writeRaw(filepath.Join(dir, long), nil, 0o644); err != nil {
		t.Skipf("no names of 1000 bytes here: %v", err)
	}
	os.Remove(filepath.Join(dir, long))
	w.Drain()
	// names of 255 bytes until the queue holds each amount up to a read's
	// buffer, then the long name and the write: wherever the long event
	// falls, past a read's end or not, the write is in the drain
	for target := 0; target < len(h.buf)+1024; target += 200 {
		var pads []string
		for i := 0; ; i++ {
			queued, err := unix.IoctlGetInt(h.fd, 0x541B) // FIONREAD
			if err != nil {
				t.Skip(err)
			}
			if queued >= target {
				break
			}
			p := filepath.Join(dir, fmt.Sprintf("%03d", i)+strings.Repeat("p", 252))
			writeRaw(p, nil, 0o644)
			pads = append(pads, p)
		}
		writeRaw(filepath.Join(dir, long), nil, 0o644)
		writeRaw(pinned, []byte(fmt.Sprint("evil", target)), 0o644) // the attack, before the call
		changed, _, lost, names := w.Drain()
		if !changed || !(lost || slices.Contains(names, pinned)) {
			t.Fatalf("%d bytes queued before a 1024-byte event: a write to %s before the drain is not in it (changed %v, lost %v, %d names)",
				target, filepath.Base(pinned), changed, lost, len(names))
		}
		for _, p := range append(pads, filepath.Join(dir, long)) {
			os.Remove(p)
		}
		w.Drain()
	}
}

// writeRaw writes a file on the test's FUSE file system with plain
// system calls. os.OpenFile would register the file with the runtime's
// poller: epoll_ctl asks the file system to poll it, and this process,
// which serves the file system, cannot answer while that thread holds up
// a stop of the world for a collection (the test hung in D state under
// -race, unkillable until the connection was aborted).
func writeRaw(path string, data []byte, perm uint32) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err != nil {
			unix.Close(fd)
			return err
		}
		data = data[n:]
	}
	return unix.Close(fd)
}
