// Package testenv holds what piagent's tests read from their environment
// rather than from an Env value: the PIAGENT_TEST_SLOW factor for a loaded
// machine (docs/testing.md). Only tests import it.
package testenv

import (
	"os"
	"strconv"
	"time"
)

// SlowFactor is PIAGENT_TEST_SLOW: a number from 1 to 100 that multiplies
// every bound a test puts on elapsed time. Unset, or a value outside that
// range, is 1; scripts/test.sh refuses a value that is not a number before
// any test runs.
func SlowFactor() float64 {
	f, err := strconv.ParseFloat(os.Getenv("PIAGENT_TEST_SLOW"), 64)
	if err != nil || f < 1 || f > 100 {
		return 1
	}
	return f
}

// Slow is d times SlowFactor: the budget for something a quiet machine
// does within d.
func Slow(d time.Duration) time.Duration { return time.Duration(float64(d) * SlowFactor()) }
