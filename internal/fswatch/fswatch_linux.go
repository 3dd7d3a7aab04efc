//go:build linux

package fswatch

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

type sys struct {
	fd     int
	broken bool // a folder could not be watched: every Changed reports a change
	buf    [4096]byte
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
	_, err := unix.InotifyAddWatch(w.fd, dir, mask)
	if err != nil && err != unix.ENOENT && err != unix.ENOTDIR {
		w.broken = true
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

// Changed drains the pending events and reports whether there were any.
func (w *Watch) Changed() bool {
	if w == nil || w.broken {
		return true
	}
	any := false
	for {
		n, err := unix.Read(w.fd, w.buf[:])
		if n <= 0 || err != nil {
			return any
		}
		any = true
	}
}

// Close releases the watch.
func (w *Watch) Close() {
	if w != nil {
		unix.Close(w.fd)
	}
}
