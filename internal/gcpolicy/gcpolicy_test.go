package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// Before the first collection the collector is off below the limit; after
// it, the default pace with no limit. Not parallel: it sets the process's
// collector.
func TestOneShot(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	OneShot(32 << 20)
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC before the first collection = %d, want off", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 32<<20 {
		t.Fatalf("the limit before the first collection = %d", got)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pct := debug.SetGCPercent(-1)
		debug.SetGCPercent(pct)
		if pct == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC after the first collection = %d, want 100", pct)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("the limit after the first collection = %d, want none", got)
	}
}

// A pace the program set after OneShot (the guard helper's GOGC 50) is
// kept at the first collection.
func TestOneShotKeepsALaterPace(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	OneShot(32 << 20)
	LongLived()
	runtime.GC()
	runtime.GC() // the cleanup has run by the second cycle's end, or soon after
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GOGC = %d, want the helper's 50 kept", got)
	}
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink [][]byte

// Between collects once the helper has waited Pause after growing its
// heap, not when a request comes first (Busy), and not when the heap has
// not grown. Not parallel: it counts the process's collections.
func TestBetweenCollectsInThePause(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	b := LongLived()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("the helper runs on %d processors, want 1", n)
	}
	wait := func() { time.Sleep(Pause + 100*time.Millisecond) }
	grow := func() {
		runtime.GC()
		sink = nil
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		room := s[1].Value.Uint64() - s[0].Value.Uint64()
		for n := uint64(0); n < room/2; n += 4096 {
			sink = append(sink, make([]byte, 4096))
		}
		sink = nil
	}

	grow()
	n := cycles()
	b.Idle()
	b.Busy() // a request came within the pause
	wait()
	if got := cycles(); got != n {
		t.Errorf("a request within the pause: %d collections, want none", got-n)
	}

	n = cycles()
	b.Idle()
	wait()
	if got := cycles(); got == n {
		t.Error("a pause after the heap grew half way to its goal: no collection")
	}

	runtime.GC()
	n = cycles()
	b.Idle()
	wait()
	if got := cycles(); got != n {
		t.Errorf("a pause with the heap clean: %d collections, want none", got-n)
	}
}
