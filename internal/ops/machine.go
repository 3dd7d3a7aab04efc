package ops

import (
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

// MissingRuntime names what a preset server needs that this machine lacks
// now: Docker (the program, and a daemon that answers), a Chrome, a
// variable it cannot start without. "" when nothing it needs is missing (or
// piagent cannot look for it). setup seeds only servers that can run, so
// doctor is green straight after it (issue 42, item 5).
func (o *Ops) MissingRuntime(needs []preset.Need) string {
	for _, n := range needs {
		switch {
		case n.Kind == preset.NeedDocker:
			docker := o.LookPath("docker")
			if docker == "" {
				return "Docker: docker is not on PATH"
			}
			if _, err := o.Output(docker, "info", "--format", "{{.ServerVersion}}"); err != nil {
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
