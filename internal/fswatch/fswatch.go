// Package fswatch tells, with one non-blocking read, whether anything may
// have changed beneath a set of folders since the last time it was asked:
// the cheap test in front of the stat-by-stat checks the guard helper makes
// before every tool call. It is an inotify watch on Linux; elsewhere, and
// whenever the watch cannot be trusted (an overflowed queue, a folder it
// could not watch), it answers "changed", and the caller checks the slow
// way. It never answers "unchanged" without being sure.
package fswatch

// Watch is a set of watched folders. A nil *Watch always reports a change.
type Watch struct {
	sys
}
