//go:build unix

package sandbox

import "golang.org/x/sys/unix"

// unreadable reports whether this user cannot read path at all (another
// user's file, /etc/shadow for all but root): the sandbox needs no rule
// to keep it so.
func unreadable(path string) bool { return unix.Access(path, unix.R_OK) == unix.EACCES }
