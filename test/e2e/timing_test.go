package e2e

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// The suite's budgets for a loaded machine (docs/testing.md). Every wait in
// it is a bound on something that should happen, never a claim about speed:
// a shared 2-core machine at load 20 must not turn a correct run into a
// failure.
//
//	PIAGENT_E2E_TIMEOUT  one Pi run's budget, and the least any wait in the
//	                     suite gets (a Go duration; default 3m)
//	PIAGENT_TEST_SLOW    a factor for every budget (default 1)
var (
	// DefaultTimeout bounds one Pi run: PIAGENT_E2E_TIMEOUT times
	// PIAGENT_TEST_SLOW. readTiming sets it before any test runs.
	DefaultTimeout = 3 * time.Minute
	slowFactor     = 1.0
)

// readTiming reads PIAGENT_E2E_TIMEOUT and PIAGENT_TEST_SLOW; a value it
// cannot use is an error that names the fix, not a silent default.
func readTiming() error {
	if v := os.Getenv("PIAGENT_TEST_SLOW"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 || f > 100 {
			return fmt.Errorf("PIAGENT_TEST_SLOW=%q: want a factor from 1 to 100, such as 2", v)
		}
		slowFactor = f
	}
	base := 3 * time.Minute
	if v := os.Getenv("PIAGENT_E2E_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("PIAGENT_E2E_TIMEOUT=%q: want a Go duration such as 5m", v)
		}
		base = d
	}
	DefaultTimeout = Scaled(base)
	return nil
}

// Scaled is d times PIAGENT_TEST_SLOW.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * slowFactor) }

// budget is what a wait given d actually gets: d scaled, and never less
// than DefaultTimeout. A test's own shorter bound (30 s for a dialog) said
// what it expects on a quiet machine; on a loaded one only the result
// matters, and a hang still ends.
func budget(d time.Duration) time.Duration { return max(Scaled(d), DefaultTimeout) }
