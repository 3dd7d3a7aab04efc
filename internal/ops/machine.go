package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/preset"
)

// browserFound reports whether a Chrome or Chromium is installed where the
// browser servers look: on PATH, in the usual application folders, or in
// Playwright's own download cache.
func (o *Ops) browserFound() bool {
	for _, name := range []string{"google-chrome", "google-chrome-stable", "chromium", "chromium-browser", "chrome"} {
		if o.LookPath(name) != "" {
			return true
		}
	}
	fixed := []string{
		"/opt/google/chrome/chrome",
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		"/Applications/Chromium.app/Contents/MacOS/Chromium",
	}
	for _, p := range fixed {
		if paths.Executable(p, os.Stat) {
			return true
		}
	}
	for _, cache := range []string{".cache/ms-playwright", "Library/Caches/ms-playwright"} {
		if m, _ := filepath.Glob(filepath.Join(o.Home, cache, "chromium-*")); len(m) > 0 {
			return true
		}
	}
	return false
}

// ServerHints are what a ready server runs that needs a program piagent
// can look for but that does not change its state: a browser for
// chrome-devtools-mcp and @playwright/mcp, wherever the entry came from.
func (o *Ops) ServerHints(s *gate.Server) []string {
	if s.State != gate.Ready {
		return nil
	}
	var out []string
	for _, n := range preset.NeedsOf(s.Config.Entry) {
		if n.Kind == preset.NeedChrome && !o.browserFound() {
			out = append(out, "needs "+n.Text+"; no Chrome or Chromium found on PATH or in the usual places")
		}
	}
	return out
}

// errNoDocker: the person's PATH holds no docker.
var errNoDocker = errors.New("docker is not on PATH")

// DockerAnswers asks whether Docker answers: a docker on the person's PATH,
// and its daemon answering `docker info`. It is the one place piagent runs
// docker info, for doctor and for the presets setup seeds, each only when a
// server needs Docker.
func (o *Ops) DockerAnswers() error {
	docker := o.LookPath("docker")
	if docker == "" {
		return errNoDocker
	}
	if o.Output == nil {
		return errors.New("cannot run docker info: no way to run a program here")
	}
	_, err := o.Output(docker, "info", "--format", "{{.ServerVersion}}")
	return err
}

// ProgramError is how a program Output ran ended when it failed: the error,
// and the first line it wrote on stderr.
type ProgramError struct {
	Err  error
	Said string
}

func (e *ProgramError) Error() string { return e.Err.Error() + ": " + e.Said }
func (e *ProgramError) Unwrap() error { return e.Err }

// said is what a program said of its failure (its first line on stderr),
// else the failure itself.
func said(err error) string {
	if pe, ok := errors.AsType[*ProgramError](err); ok && pe.Said != "" {
		return pe.Said
	}
	return err.Error()
}

// MissingRuntime names what a preset server needs that this machine lacks
// now: Docker (the program, and a daemon that answers), a Chrome, a
// variable it cannot start without. "" when nothing it needs is missing (or
// piagent cannot look for it). setup seeds only servers that can run, so
// doctor is green straight after it (issue 42, item 5).
func (o *Ops) MissingRuntime(needs []preset.Need) string {
	for _, n := range needs {
		switch {
		case n.Kind == preset.NeedDocker:
			if err := o.DockerAnswers(); errors.Is(err, errNoDocker) {
				return "Docker: docker is not on PATH"
			} else if err != nil {
				return fmt.Sprintf("Docker running: docker info failed (%v)", err)
			}
		case n.Kind == preset.NeedChrome && !o.browserFound():
			return "Chrome or Chromium: none found on PATH or in the usual places"
		case n.Kind == preset.NeedEnv && !n.Optional && o.getenv(n.Name) == "":
			return n.Name + " set: it is not set here"
		}
	}
	return ""
}
