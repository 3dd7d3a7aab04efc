// Package gcpolicy sets the garbage collector's pace for piagent's
// commands, from their main packages only (a test binary that links the
// commands keeps the runtime's default): OneShot at the start, LongLived
// when the command turns out to be the guard helper.
package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
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
// commands' relaxed pace; OneShot's first collection keeps it. It runs on
// one processor (GOMAXPROCS 1): the helper answers one call at a time, and
// a second processor only hands the call between threads and lets a
// collection's worker run beside it (a new bash line's p99 went from
// 520-1,171 µs to 340-396 µs, docs/performance.md). The mains hand it to
// the CLI (cli.Env.LongLived), which calls it once the helper starts; the
// helper tells the Between it returns when a request comes and when it
// waits.
func LongLived() *Between {
	debug.SetGCPercent(50)
	runtime.GOMAXPROCS(1)
	return newBetween()
}

// Between collects the guard helper's garbage between calls. The runtime
// starts a cycle on the allocation that crosses its trigger, so in a
// session paced by the model (seconds between calls) every cycle runs
// inside some call. Between runs it in the pause instead: once the helper
// has waited Pause for the next request with no other pending, and the
// heap has grown a quarter of the way from the last cycle's live heap to
// the goal, it collects; the next call then finds the heap clean and the
// trigger far. Calls that come back to back (no pause) meet the runtime's
// own cycles as before.
type Between struct {
	timer *time.Timer
}

// Pause is how long the helper waits with nothing to answer before it
// collects: long enough that a burst of calls (a batch of tool calls in
// one turn) is not interrupted, far shorter than a model's turn.
const Pause = 2 * time.Millisecond

// Busy is called when a request arrives; Idle after its answer, when no
// other is waiting to be read.
func (b *Between) Busy() { b.timer.Stop() }
func (b *Between) Idle() { b.timer.Reset(Pause) }

// grown reports whether the heap has grown a quarter of the way from the
// last cycle's live heap to the goal (runtime/metrics, no stop of the
// world).
func grown(s []metrics.Sample) bool {
	metrics.Read(s)
	for _, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			return false // a runtime without these metrics: the runtime's own pace alone
		}
	}
	objects, live, goal := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	return goal > live && objects >= live+(goal-live)/4
}

func newBetween() *Between {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	b := &Between{}
	b.timer = time.AfterFunc(time.Hour, func() {
		if grown(s) {
			runtime.GC()
		}
	})
	b.timer.Stop()
	return b
}
