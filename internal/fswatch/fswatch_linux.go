//go:build linux

package fswatch

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

type sys struct {
	fd     int
	broken bool // a folder could not be watched: every Changed reports a change
	buf    [4096]byte
	dirs   map[int32]string // watch descriptor -> the folder it watches
}

// mask is every event that can change what a path names or holds,
// including the watched folder itself moving or going away.
const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

// New returns an empty watch, or nil when inotify is not available.
func New() *Watch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &Watch{sys{fd: fd}}
}

// Add watches the entries of dir (not below them). A dir that does not
// exist is an error for the caller to handle (watch an ancestor); any other
// failure makes the watch report a change on every call.
func (w *Watch) Add(dir string) error {
	if w == nil {
		return nil
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, mask)
	if err != nil && err != unix.ENOENT && err != unix.ENOTDIR {
		w.broken = true
	}
	if err == nil {
		if w.dirs == nil {
			w.dirs = map[int32]string{}
		}
		w.dirs[int32(wd)] = dir
	}
	return err
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

// maxNames bounds the names Drain gathers; past it, it reports lost, so
// the caller checks everything.
const maxNames = 4096

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
	for {
		n, err := unix.Read(w.fd, w.buf[:])
		if n <= 0 || err != nil {
			return changed, folders, lost, names
		}
		changed = true
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			const folder = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE
			switch {
			case ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
				lost = true
			case ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&folder != 0:
				folders = true
			}
			if !lost {
				dir, ok := w.dirs[ev.Wd]
				switch {
				case !ok || len(names) >= maxNames:
					lost = true
				case ev.Len == 0:
					names = append(names, dir)
				default:
					raw := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
					if i := bytes.IndexByte(raw, 0); i >= 0 {
						raw = raw[:i]
					}
					names = append(names, filepath.Join(dir, string(raw)))
				}
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
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
		var st unix.Stat_t
		if err := unix.Lstat(n, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
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

// Close releases the watch.
func (w *Watch) Close() {
	if w != nil {
		unix.Close(w.fd)
	}
}
