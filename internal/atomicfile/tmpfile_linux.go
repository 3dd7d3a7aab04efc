//go:build linux

package atomicfile

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a file in dir that has no name (O_TMPFILE); nil where
// the file system cannot.
func openUnnamed(dir string, mode os.FileMode) (*os.File, bool) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), dir+"/(unnamed)"), false
}

// linkUnnamed gives f the name path: through /proc, or by the descriptor
// itself (AT_EMPTY_PATH) where /proc is not mounted.
func linkUnnamed(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err == nil {
		return nil
	}
	if err2 := unix.Linkat(int(f.Fd()), "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH); err2 == nil {
		return nil
	}
	return &os.LinkError{Op: "linkat", Old: f.Name(), New: path, Err: err}
}
