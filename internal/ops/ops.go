// Package ops is the operations layer: one function per verb of the table
// in internal/ops/verbs, options in and a typed result out (what changed,
// and a fix as gate.Fix data). The command line fills the options from its
// flags and words the result; the rules (what a consent records, which
// decision a reset drops, …) are here. ops writes nothing to a terminal: a
// refusal is an *Error with its hints as data, and what a verb has to say
// on the way (a lock held by another command, a warning) goes through the
// Ops's callbacks.
package ops

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/sandboxexec"
)

// Ops runs verbs for one person. Its zero value is not useful: Home is
// required; the callbacks may be nil.
type Ops struct {
	Home      string
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	Now       func() time.Time
	// Dir is the working directory (PIAGENT_PI may be relative to it).
	Dir string
	// Output runs a short query of another program (pi --version) and
	// returns what it printed.
	Output func(argv ...string) (string, error)
	// Binaries are piagent's own executables, the first the one running
	// (none when unknown: every confined server would then fail to start).
	Binaries []string
	// Waiting is told who holds the lock of what a verb waits for.
	Waiting func(what, holder string)
	// Warn is told of a failure that does not stop the verb (the launch
	// file could not be refreshed).
	Warn func(error)

	cat *catalogueFiles // read once
}

func (o *Ops) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *Ops) getenv(k string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(k)
}

func (o *Ops) waiting(what string) func(holder string) {
	return func(holder string) {
		if o.Waiting != nil {
			o.Waiting(what, holder)
		}
	}
}

func (o *Ops) warn(err error) {
	if o.Warn != nil && err != nil {
		o.Warn(err)
	}
}

// Kind is how a refusal ends a command.
type Kind int

const (
	// Refused: a decision the verb will not take, or a state that needs a
	// person.
	Refused Kind = iota + 1
	// Usage: the options do not make sense together.
	Usage
)

// Error is a refusal with what a person can do about it, as data: each
// hint a fix the edge words for the command the person typed.
type Error struct {
	Kind  Kind
	Err   error
	Hints []gate.Fix
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// refused is a refusal with hints, each a fix of text alone or of steps.
func refused(err error, hints ...gate.Fix) *Error {
	return &Error{Kind: Refused, Err: err, Hints: hints}
}

// text is a hint of words alone.
func text(s string) gate.Fix { return gate.Fix{Text: s} }

// texts are hints of words alone.
func texts(ss ...string) []gate.Fix {
	out := make([]gate.Fix, 0, len(ss))
	for _, s := range ss {
		out = append(out, text(s))
	}
	return out
}

// Gate computes the gate for the project at dir (absolute).
func (o *Ops) Gate(dir string) (*gate.Gate, error) {
	if o.Home == "" {
		return nil, refused(paths.ErrNoHome)
	}
	g, err := gate.Load(gate.Options{Home: o.Home, Cwd: dir, Getenv: gate.RealEnv(o.getenv)})
	if err != nil {
		return nil, refused(err)
	}
	return g, nil
}

// Server finds the server a verb names, or says why there is none: a file
// that could not be read may declare it, or a name close to it.
func Server(g *gate.Gate, name string) (*gate.Server, error) {
	if s, ok := g.Server(name); ok {
		return s, nil
	}
	var names []string
	for _, s := range g.Servers {
		names = append(names, s.Name)
	}
	// Not found is a refusal, as in gh: the command was well formed, the
	// world holds no such server.
	err := fmt.Errorf("no MCP server named %q in %s", name, g.View.Cwd)
	if len(g.View.Skipped) > 0 {
		// A file that could not be read may declare it: say which, rather
		// than that it does not exist.
		var files, hints []string
		for _, sk := range g.View.Skipped {
			files = append(files, sk.Path+" ("+sk.Reason+")")
			hints = append(hints, "repair "+sk.Path+", then run this again")
		}
		return nil, refused(fmt.Errorf("no MCP server named %q was read in %s, but %s could not be read and may declare it", name, g.View.Cwd, strings.Join(files, ", ")), texts(slices.Compact(hints)...)...)
	}
	if close := CloseNames(name, names); len(close) > 0 {
		return nil, refused(err, text("did you mean "+strings.Join(close, " or ")+"?"))
	}
	return nil, refused(err, gate.Fix{Text: "run", Steps: []gate.Step{{Sub: "list"}}, Note: "to see the servers", Quoted: true})
}

// CloseNames returns names within a small edit distance of name, or
// sharing a prefix with it.
func CloseNames(name string, names []string) []string {
	var out []string
	for _, n := range names {
		d := EditDistance(strings.ToLower(name), strings.ToLower(n))
		if (d <= 2 || d <= len(name)/3 || strings.HasPrefix(n, name) || strings.HasPrefix(name, n)) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// EditDistance is the Levenshtein distance of a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// Display shortens a path for people: ~ for home, relative inside the
// project.
func Display(home, project, p string) string {
	if p == "" {
		return ""
	}
	if project != "" && paths.Within(project, p) {
		if rel, err := filepath.Rel(project, p); err == nil {
			return rel
		}
	}
	if home != "" && paths.Within(home, p) {
		rel, _ := filepath.Rel(home, p)
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}

// Confine is how the launcher wraps servers: in piagent's server sandbox,
// unless the user's policy says "serverSandbox": "off" (doctor then warns),
// or piagent's own path is unknown (then every server would fail to start,
// which the notice says).
func (o *Ops) Confine(project string) *launch.Confine {
	if pol, _ := policy.Load(o.Home, project); pol != nil && pol.Err() == nil && pol.ServerSandbox() == policy.ServerSandboxOff {
		return nil
	}
	bin := ""
	if len(o.Binaries) > 0 {
		bin = o.Binaries[0]
	}
	return &launch.Confine{Bin: bin, Lean: sandboxexec.Lean(bin)}
}

// RefreshLaunch rewrites the launcher's file of what may run after a
// change, when one exists; a failure is a warning.
func (o *Ops) RefreshLaunch(project string) {
	o.warn(launch.Refresh(o.Home, project, o.getenv, o.Confine(project)))
}
