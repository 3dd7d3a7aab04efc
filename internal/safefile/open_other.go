//go:build !unix

package safefile

const (
	nonblock = 0
	nofollow = 0
)

func isLoop(error) bool { return false }
