//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd

package safefile

import "io/fs"

func sysStat(fs.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }

// owner is unknown here: the mode checks alone apply.
func owner(fs.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }
