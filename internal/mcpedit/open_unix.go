//go:build unix

package mcpedit

import "syscall"

// openFlags makes opening a FIFO return at once instead of waiting for a
// writer; the Stat after the open then refuses it.
const openFlags = syscall.O_NONBLOCK
