package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
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
	OneShot(32 << 20)
	LongLived()
	runtime.GC()
	runtime.GC() // the cleanup has run by the second cycle's end, or soon after
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GOGC = %d, want the helper's 50 kept", got)
	}
}
