// Package gcpolicy sets the garbage collector's pace for piagent's
// commands, from their main packages only (a test binary that links the
// commands keeps the runtime's default): OneShot at the start, LongLived
// when the command turns out to be the guard helper.
package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
)

// sentinel is a heap object no one refers to: the first collection frees
// it, and its cleanup then runs.
type sentinel struct {
	_ *int
	_ [48]byte
}

// OneShot is the pace of a command that reads its files once and exits:
// no collection until the heap reaches limit (most commands end first, and
// pay for none), then, from that first collection on, the runtime's
// default pace (GOGC 100, no limit), so that a configuration far larger
// than limit is not collected back to back at the limit. A pace set in
// between (a long-lived command's own) is kept.
func OneShot(limit int64) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	runtime.AddCleanup(new(sentinel), func(struct{}) {
		// A pace set since (the guard helper's) stays.
		if old := debug.SetGCPercent(100); old != -1 {
			debug.SetGCPercent(old)
		}
		if old := debug.SetMemoryLimit(math.MaxInt64); old != limit {
			debug.SetMemoryLimit(old)
		}
	}, struct{}{})
}

// LongLived is the guard helper's pace: it lives as long as the session
// and keeps little (its live heap is under a MiB between calls), so it
// collects at half the default growth (GOGC 50), not at the one-shot
// commands' relaxed pace; OneShot's first collection keeps it. The mains
// hand it to the CLI (cli.Env.LongLived), which calls it once the helper
// starts.
func LongLived() { debug.SetGCPercent(50) }
