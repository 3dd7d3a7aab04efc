//go:build !linux

package sandbox

import "runtime"

// MinABI is Linux's; elsewhere it means nothing.
const MinABI = 3

// Status says what this machine can enforce.
type Status struct {
	Mechanism      string `json:"mechanism"`
	ABI            int    `json:"abi"`
	Scoped         bool   `json:"scoped"`
	Seccomp        bool   `json:"seccomp"`
	MountNamespace bool   `json:"mountNamespace"`
	Missing        string `json:"missing,omitempty"`
}

// Probe reports that no sandbox is implemented for this system yet.
func Probe() Status {
	return Status{Missing: "piagent has no sandbox for " + runtime.GOOS + " yet"}
}

// UnavailableError is returned when no sandbox applies on this machine.
type UnavailableError struct{ Missing string }

func (e *UnavailableError) Error() string { return "no sandbox can be applied: " + e.Missing }

// Exec refuses: nothing is run unconfined.
func Exec(p Profile, argv, env []string) error {
	return &UnavailableError{Missing: Probe().Missing}
}
