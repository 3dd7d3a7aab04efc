//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

const (
	nonblock = syscall.O_NONBLOCK
	nofollow = syscall.O_NOFOLLOW
)

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
