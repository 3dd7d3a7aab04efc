//go:build unix

package approval

import "syscall"

// openFlags makes opening a FIFO return at once instead of waiting for a
// writer.
const openFlags = syscall.O_NONBLOCK
