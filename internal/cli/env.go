// Package cli is piagent's command tree: `piagent …` and `piagent-mcp …`,
// their flags, --json rendering, exit codes and the mapping from errors to
// hints. Behaviour lives behind Main; only the mains exit.
package cli

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/ops"
	"golang.org/x/term"
)

// Env is everything a command may learn about the world: stdio, the
// environment, the working directory, home and the clock. Tests build one per
// case, so every test can run in parallel with a fake home.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string // KEY=VALUE pairs
	Dir            string   // working directory
	Home           string
	Now            func() time.Time
	// Interactive reports whether a person can answer a question on Stdin.
	Interactive bool
	// Width is the width of the terminal Stdout is, in columns; 0 when
	// Stdout is not a terminal (a pipe gets every column whole).
	Width int
	// LongLived, when set, is called once the command turns out to live as
	// long as the session (the guard helper): the mains set the
	// collector's pace there (gcpolicy.LongLived), and the Pace it returns
	// (the collector between calls) is told when the helper is busy and
	// when it waits. A test leaves it nil, and its binary keeps the
	// runtime's default pace.
	LongLived func() ops.Pace

	vars map[string]string // Environ by name, when made by indexed
}

// OSEnv is the process's own Env.
func OSEnv() Env {
	dir, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	if h := os.Getenv("HOME"); h != "" {
		home = h
	}
	return Env{
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		Environ:     os.Environ(),
		Dir:         dir,
		Home:        home,
		Now:         time.Now,
		Interactive: term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())),
		Width:       stdoutWidth(),
	}.indexed()
}

func stdoutWidth() int {
	w, _, err := term.GetSize(int(os.Stdout.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// indexed returns e with its Environ looked up by name rather than by a
// scan of every pair: a large configuration asks for a variable or two per
// server. Environ must not change afterwards.
func (e Env) indexed() Env {
	e.vars = make(map[string]string, len(e.Environ))
	for _, kv := range e.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.vars[k] = v // the last assignment wins
		}
	}
	return e
}

// Getenv looks a variable up in Environ; the last assignment wins.
func (e Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

// LookupEnv is Getenv that tells an empty value from an unset one.
func (e Env) LookupEnv(key string) (string, bool) {
	if e.vars != nil {
		v, ok := e.vars[key]
		return v, ok
	}
	val, found := "", false
	for _, kv := range e.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}
