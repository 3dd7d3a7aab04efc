//go:build !unix

package atomicfile

const nofollow = 0

// gone cannot tell here: a lock is taken over only when unreadable and old.
func gone(int) bool { return false }
