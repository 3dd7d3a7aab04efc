//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
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

// ExecUnconfined replaces this process with argv as it is: the fallback a
// caller chose (sandbox exec --auto) where no sandbox applies.
func ExecUnconfined(argv, env []string) error {
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, env)
}

func lookPath(name string, env []string) (string, error) {
	if filepath.IsAbs(name) || filepath.Base(name) != name {
		return name, nil
	}
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			for _, dir := range filepath.SplitList(kv[5:]) {
				p := filepath.Join(dir, name)
				if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", errors.New(name + ": not found on PATH")
}
