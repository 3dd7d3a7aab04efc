//go:build !linux && !darwin

package sandbox

import (
	"runtime"
)

// MinABI is Linux's; elsewhere it means nothing.
const MinABI = 3

// Probe reports that no sandbox is implemented for this system.
func Probe() Status {
	return Status{Missing: "piagent has no sandbox for " + runtime.GOOS}
}

// Exec refuses: nothing is run unconfined.
func Exec(p Profile, argv, env []string) error {
	return &UnavailableError{Missing: Probe().Missing}
}
