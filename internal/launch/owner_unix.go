//go:build unix

package launch

import (
	"io/fs"
	"os"
	"syscall"
)

// installed reports a file or folder owned by root or this user that no one
// else may write.
func installed(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if st.Uid != 0 && int(st.Uid) != os.Getuid() {
		return false
	}
	return fi.Mode().Perm()&0o022 == 0
}

// ownedPrivate reports a file or folder of this user's that no one else
// may write.
func ownedPrivate(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && fi.Mode().Perm()&0o022 == 0
}
