//go:build linux

package fswatch

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Hub is one inotify instance shared by several watches (issue 46: the
// engine's gate, session and link watches were three instances, each
// read twice and each stat-ing the same names after every edit). A drain
// of any of its watches reads the instance once and hands each event to
// every watch of the folder it names; the others find theirs waiting. A
// nil *Hub makes watches with an instance of their own.
type Hub struct {
	mu  sync.Mutex
	fd  int
	buf [4 * maxEvent]byte
	// wds: watch descriptor -> the watches of that folder, each with the
	// folder's name as it added it
	wds map[int32]map[*Watch]string
	// linked: lstat answers since the last read that found events
	// (Watch.HardLinked); any event may change them, so each clears them
	linked map[string]bool
	// batch: between Begin and End, only the first drain reads the
	// instance (read says it has)
	batch, read bool
}

type sys struct {
	hub     *Hub
	own     bool // the hub is this watch's alone: Close closes it
	broken  bool // a folder could not be watched: every Drain reports a change
	wds     map[int32]bool
	changed bool
	folders bool
	lost    bool
	names   []string
	// entries: an entry was made, removed or renamed in a folder since
	// the last Drain; lastEntries, the last Drain's (Entries)
	entries, lastEntries bool
	// dirs: the folders made, moved or removed since the last Drain;
	// lastDirs, the last Drain's (Folders)
	dirs, lastDirs []string
}

// mask is every event that can change what a path names or holds,
// including the watched folder itself moving or going away.
const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// NewHub returns a shared instance, or nil when inotify is not available.
func NewHub() *Hub {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &Hub{fd: fd, wds: map[int32]map[*Watch]string{}}
}

// Watch returns an empty watch in the hub; in a nil hub, New's.
func (h *Hub) Watch() *Watch {
	if h == nil {
		return New()
	}
	return &Watch{sys{hub: h}}
}

// Close releases the instance. Call it after every watch in it is closed.
// The descriptor is forgotten: its number may be another file's next, and
// a watch added or drained after (a call after the engine closed) fails
// and reports a change, never reads or watches through that file.
func (h *Hub) Close() {
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		unix.Close(h.fd)
		h.fd = -1
		h.lostAll()
	}
}

// lostAll marks every watch of the hub lost.
func (h *Hub) lostAll() {
	for _, subs := range h.wds {
		for w := range subs {
			w.changed, w.lost = true, true
		}
	}
}

// New returns an empty watch with an instance of its own, or nil when
// inotify is not available.
func New() *Watch {
	h := NewHub()
	if h == nil {
		return nil
	}
	return &Watch{sys{hub: h, own: true}}
}

// Add watches the entries of dir (not below them). A dir that does not
// exist is an error for the caller to handle (watch an ancestor); any other
// failure makes the watch report a change on every call.
func (w *Watch) Add(dir string) error {
	if w == nil {
		return nil
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	wd, err := unix.InotifyAddWatch(h.fd, dir, mask)
	if err != nil {
		if err != unix.ENOENT && err != unix.ENOTDIR {
			w.broken = true
		}
		return err
	}
	// the same folder added by another watch has the same descriptor;
	// events queued before this Add reach this watch too (a change
	// reported twice, never one missed)
	subs := h.wds[int32(wd)]
	if subs == nil {
		subs = map[*Watch]string{}
		h.wds[int32(wd)] = subs
	}
	subs[w] = dir
	if w.wds == nil {
		w.wds = map[int32]bool{}
	}
	w.wds[int32(wd)] = true
	return nil
}

// AddTree watches root and every folder below it as they are now.
func (w *Watch) AddTree(root string) {
	if w == nil {
		return
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			w.Add(p)
		}
		return nil
	})
}

// maxNames bounds the names a watch gathers; past it, it reports lost, so
// the caller checks everything.
const maxNames = 4096

// maxEvent is the largest event a read can return: a name is one
// component of a path, at most PATH_MAX-1 bytes and its NUL. NAME_MAX
// (255) is ext4's and tmpfs's limit, not the kernel's: FUSE takes names of
// 1024 bytes, exfat, vfat and ntfs3 255 UTF-16 units (up to 765 bytes),
// and an event larger than the room a read left would end the drain with
// events still queued.
const maxEvent = unix.SizeofInotifyEvent + unix.PathMax

// Drain reads the pending events: changed when there were any; names, the
// paths they were about (an entry's path in its watched folder, or the
// folder itself for an event on it); folders when a folder was created,
// moved in or out, or deleted in a watched folder (named in names like any
// entry); lost when names cannot be complete (a queue that
// overflowed, a watched folder itself deleted or moved, too many names).
// A caller that knows which names matter to it can then ignore a folder
// made beside them (issue 46: a folder made anywhere in /tmp, an
// ancestor of every test's project, no longer costs a full check).
func (w *Watch) Drain() (changed, folders, lost bool, names []string) {
	if w == nil || w.broken {
		return true, true, true, nil
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.batch || !h.read {
		h.drain()
		h.read = h.batch
	}
	changed, folders, lost, names = w.changed, w.folders, w.lost, w.names
	w.lastEntries = w.entries || lost
	w.lastDirs = w.dirs
	w.changed, w.folders, w.lost, w.names, w.entries, w.dirs = false, false, false, nil, false, nil
	return changed, folders, lost, names
}

// Folders are the folders the last Drain said were made, moved in or out,
// or removed (its folders), each also in its names: a caller that cares
// only whether one is on its way need not look at the files beside them
// (a file it read, edited, beside a test's folder made in /tmp).
func (w *Watch) Folders() []string {
	if w == nil {
		return nil
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.lastDirs
}

// Entries reports whether the last Drain's events made, removed or
// renamed an entry of a watched folder (or could not all be named): when
// it did not, every event was about a name's content or attributes, and
// no folder's own stamp changed with them (issue 46: the folder of a file
// edited is not stat-ed again). A nil or broken watch reports true.
func (w *Watch) Entries() bool {
	if w == nil || w.broken {
		return true
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	return w.lastEntries
}

// Begin starts a batch of drains, one tool call's: the first drain of any
// watch reads the instance, and the others take what it handed them, so
// a call reads it once, not once per watch. Everything written before the
// first drain is in what it read; what comes after is the next call's, as
// it would be for a watch drained before it. End ends the batch: every
// drain reads again. A nil hub does nothing.
func (h *Hub) Begin() {
	if h != nil {
		h.mu.Lock()
		h.batch, h.read = true, false
		h.mu.Unlock()
	}
}

// End ends the batch Begin started.
func (h *Hub) End() {
	if h != nil {
		h.mu.Lock()
		h.batch, h.read = false, false
		h.mu.Unlock()
	}
}

// drain reads the instance until it is empty and hands each event to the
// watches of its folder. A read that leaves room for one more event of
// any length has emptied the queue (inotify returns every whole event
// that fits): one read, not a second to be told there is nothing more.
func (h *Hub) drain() {
	for {
		n, err := unix.Read(h.fd, h.buf[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return // empty
		}
		if err != nil || n <= 0 {
			// cannot tell what was queued (a closed hub, a failing read)
			h.lostAll()
			return
		}
		clear(h.linked)
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&h.buf[off]))
			var name []byte
			if ev.Len > 0 {
				name = h.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
			}
			h.event(ev, name)
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		if n < len(h.buf)-maxEvent {
			return
		}
	}
}

// event hands one event to the watches it concerns.
func (h *Hub) event(ev *unix.InotifyEvent, name []byte) {
	if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
		h.lostAll()
		return
	}
	// a descriptor no watch holds is one removed (Close): its late
	// events are nobody's
	subs := h.wds[ev.Wd]
	const folder = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE
	for w, dir := range subs {
		w.changed = true
		switch {
		case ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			w.lost = true
		case ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&folder != 0:
			w.folders = true
		}
		if ev.Mask&folder != 0 {
			w.entries = true
		}
		switch {
		case w.lost:
		case len(w.names) >= maxNames:
			w.lost = true
		case name == nil:
			w.names = append(w.names, dir)
		default:
			w.names = append(w.names, filepath.Join(dir, string(name)))
		}
		if !w.lost && ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&folder != 0 {
			w.dirs = append(w.dirs, w.names[len(w.names)-1])
		}
	}
	if ev.Mask&unix.IN_IGNORED != 0 {
		// the kernel dropped the watch (its folder is gone)
		for w := range subs {
			delete(w.wds, ev.Wd)
		}
		delete(h.wds, ev.Wd)
	}
}

// HardLinked reports whether one of names may be a second name of a
// file: a regular file with more than one link, or a name that is gone (a
// link made, written through and removed between two calls leaves only
// its name behind). inotify reports a write to the folder of the name
// written through, so such a write beside a watched file is an event on
// that name alone; a caller that acts only on the names it knows checks
// everything when this is so.
func HardLinked(names []string) bool {
	for _, n := range names {
		if hardLinked(n) {
			return true
		}
	}
	return false
}

func hardLinked(name string) bool {
	var st unix.Stat_t
	return unix.Lstat(name, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1
}

// HardLinked is the package's HardLinked for names this watch drained:
// each name is looked at once between two reads of the hub that find
// events, whichever of its watches asks (the gate and the session both
// ask of the same edited file).
func (w *Watch) HardLinked(names []string) bool {
	if w == nil {
		return HardLinked(names)
	}
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range names {
		v, ok := h.linked[n]
		if !ok {
			v = hardLinked(n)
			if h.linked == nil {
				h.linked = map[string]bool{}
			}
			if len(h.linked) < maxNames {
				h.linked[n] = v
			}
		}
		if v {
			return true
		}
	}
	return false
}

// Linked is HardLinked for one name that still is: a regular file with
// another name.
func Linked(name string) bool {
	var st unix.Stat_t
	return unix.Lstat(name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1
}

// Close releases the watch: its folders no other watch of the hub holds
// are no longer watched, and an instance of its own is closed.
func (w *Watch) Close() {
	if w == nil {
		return
	}
	h := w.hub
	if w.own {
		h.Close()
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for wd := range w.wds {
		subs := h.wds[wd]
		delete(subs, w)
		if subs != nil && len(subs) == 0 {
			unix.InotifyRmWatch(h.fd, uint32(wd))
			delete(h.wds, wd)
		}
	}
	w.wds = nil
}
