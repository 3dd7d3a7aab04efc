//go:build unix

package sandboxexec

import (
	"io/fs"
	"os"
	"syscall"
)

// trusted reports a file owned by root or this user that no one else may
// write.
func trusted(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (st.Uid != 0 && int(st.Uid) != os.Geteuid()) {
		return false
	}
	return fi.Mode().Perm()&0o022 == 0
}
