//go:build !linux && !darwin

package sandbox

import (
	"errors"
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
	NoProxy     func(cause string) error
	Upstream    []string
}

// ExecWith is Exec: there are no namespaces to ask about here, and no
// proxy for the network yet (the person's choice of "registries" refuses,
// the default gives way).
func ExecWith(p Profile, argv, env []string, o ExecOptions) error {
	if p.Registries {
		cause := "piagent's network proxy is applied on Linux only so far"
		if o.NoProxy == nil {
			return errors.New(cause)
		}
		if err := o.NoProxy(cause); err != nil {
			return err
		}
		p.Registries = false
	}
	return Exec(p, argv, env)
}
