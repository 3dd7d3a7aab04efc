//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

const nofollow = syscall.O_NOFOLLOW

// gone reports whether no process has this pid (EPERM: one does, another
// user's).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
