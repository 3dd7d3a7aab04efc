//go:build darwin

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// MinABI is Linux's; on macOS it means nothing.
const MinABI = 3

const sandboxExec = "/usr/bin/sandbox-exec"

// Probe reports whether Seatbelt's sandbox-exec is there.
func Probe() Status {
	if fi, err := os.Stat(sandboxExec); err != nil || fi.Mode()&0o111 == 0 {
		return Status{Missing: sandboxExec + " is missing"}
	}
	return Status{Mechanism: "seatbelt", Seccomp: false}
}

// Exec runs argv under sandbox-exec with the profile p describes; the
// paths are resolved first, since Seatbelt matches real paths.
func Exec(p Profile, argv, env []string) error {
	if st := Probe(); st.Mechanism == "" {
		return &UnavailableError{Missing: st.Missing}
	}
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	for _, d := range p.Dirs() {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("cannot create the sandbox's private folder %s: %w", d, err)
		}
	}
	profile := Seatbelt(realPaths(p))
	args := append([]string{sandboxExec, "-p", profile, "--"}, argv...)
	return syscall.Exec(sandboxExec, args, mergeEnv(env, p.Env))
}

// realPaths resolves every path of p (a missing one through its nearest
// existing parent).
func realPaths(p Profile) Profile {
	r := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, x := range ps {
			out[i] = realPath(x)
		}
		return out
	}
	p.Writable, p.Hidden, p.HiddenDirs, p.Denied, p.Absent = r(p.Writable), r(p.Hidden), r(p.HiddenDirs), r(p.Denied), r(p.Absent)
	for i := range p.Protected {
		p.Protected[i].Path = realPath(p.Protected[i].Path)
	}
	return p
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == "" || dir == p {
		return p
	}
	return filepath.Join(realPath(filepath.Clean(dir)), base)
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
