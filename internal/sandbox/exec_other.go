//go:build !linux && !darwin

package sandbox

import (
	"io"
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

// Init is Linux's: elsewhere no init is started.
func Init() int { return 125 }

// ExecOptions adjusts Exec; Linux's namespaces are the only option.
type ExecOptions struct {
	NoNamespace func(cause string) error
	Warn        io.Writer
}

// ExecWith is Exec: there are no namespaces to ask about here.
func ExecWith(p Profile, argv, env []string, _ ExecOptions) error { return Exec(p, argv, env) }
