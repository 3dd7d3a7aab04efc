//go:build darwin || freebsd || netbsd || openbsd

package safefile

import (
	"io/fs"
	"syscall"
)

func sysStat(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), st.Ctimespec.Nano()
	}
	return 0, 0, 0
}

func owner(fi fs.FileInfo) (uid, gid uint32, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, st.Gid, true
	}
	return 0, 0, false
}
