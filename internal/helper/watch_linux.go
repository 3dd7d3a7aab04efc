//go:build linux

package helper

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirtyWatch reports, with one non-blocking read, whether anything changed
// beneath the watched folders since the last call: the cheap test in front
// of the integrity walk, run before every tool call.
type dirtyWatch struct {
	fd  int
	buf [4096]byte
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_Q_OVERFLOW

// newDirtyWatch watches each folder in dirs (recursively for trees) and
// the folders holding each path in parents; nil when inotify is not
// available, and then every call counts as a change.
func newDirtyWatch(trees, parents []string) *dirtyWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &dirtyWatch{fd: fd}
	for _, p := range parents {
		if _, err := unix.InotifyAddWatch(fd, p, watchMask); err != nil && !os.IsNotExist(err) {
			unix.Close(fd)
			return nil
		}
	}
	for _, t := range trees {
		_ = filepath.WalkDir(t, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_, _ = unix.InotifyAddWatch(fd, p, watchMask)
			}
			return nil
		})
	}
	return w
}

// changed drains pending events and reports whether there were any.
func (w *dirtyWatch) changed() bool {
	if w == nil {
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
