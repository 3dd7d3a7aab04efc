package gate

import (
	"strings"

	"github.com/piagent/piagent/internal/jsonc"
)

// Fix is what moves a server or a block on, as data: Text says what to do
// (outside piagent, or before the commands), Steps are the piagent-mcp
// subcommands to run, in order, and Note follows them. The edges word it
// for the command the person types (Render); the core never spells a
// program name into a fix. In JSON (the helper protocol) it is the data
// itself, {"text", "steps": [{"sub", "args"}], "note"}, each left out when
// empty: the Pi extension words the steps as its own slash command.
type Fix struct {
	Text  string
	Steps []Step
	Note  string
	// Quoted puts the commands in quotes (inside a sentence).
	Quoted bool
}

// Step is one piagent-mcp subcommand with its arguments, space-separated
// (server names, and a flag such as --tools).
type Step struct {
	Sub  string `json:"sub"`
	Args string `json:"args,omitempty"`
}

// AcceptTools is the fix of a server whose catalogue changed since it was
// pinned: accept what it offers now.
func AcceptTools(name string) Fix { return run(Step{Sub: "approve", Args: name + " --tools"}) }

// ReviewTools is AcceptTools after a look at the server first.
func ReviewTools(name string) Fix {
	return run(step("get", name), Step{Sub: "approve", Args: name + " --tools"})
}

// run is a fix of piagent-mcp subcommands alone.
func run(steps ...Step) Fix { return Fix{Steps: steps} }

func step(sub string, args ...string) Step { return Step{Sub: sub, Args: strings.Join(args, " ")} }

// IsZero reports an empty fix (nothing to do).
func (f Fix) IsZero() bool { return f.Text == "" && len(f.Steps) == 0 && f.Note == "" }

// Render words the fix with prog as the command ("piagent-mcp", or "piagent
// mcp" for a person who typed that).
func (f Fix) Render(prog string) string {
	if len(f.Steps) == 0 && f.Note == "" {
		return f.Text // no command to word: no copy
	}
	n := len(f.Text) + len(f.Note) + 2
	for _, s := range f.Steps {
		n += len(prog) + len(s.Sub) + len(s.Args) + 10
	}
	var b strings.Builder
	b.Grow(n) // one allocation
	b.WriteString(f.Text)
	for i, s := range f.Steps {
		switch {
		case i > 0:
			b.WriteString(", then ")
		case b.Len() > 0:
			b.WriteByte(' ')
		}
		if f.Quoted {
			b.WriteByte('\'')
		}
		b.WriteString(prog)
		b.WriteString(" ")
		b.WriteString(s.Sub)
		if s.Args != "" {
			b.WriteString(" ")
			b.WriteString(s.Args)
		}
		if f.Quoted {
			b.WriteByte('\'')
		}
	}
	if f.Note != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.Note)
	}
	return b.String()
}

// String is the fix worded for piagent-mcp.
func (f Fix) String() string { return f.Render("piagent-mcp") }

// MarshalJSON encodes the fix as data: {"text", "steps": [{"sub",
// "args"}], "note"}, each member left out when empty.
func (f Fix) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendJSON appends the fix as MarshalJSON encodes it, for writers that
// skip reflection (the helper's decisions).
func (f Fix) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if f.Text != "" {
		b = jsonc.AppendString(append(b, `"text":`...), f.Text)
	}
	if len(f.Steps) > 0 {
		if f.Text != "" {
			b = append(b, ',')
		}
		b = append(b, `"steps":[`...)
		for i, s := range f.Steps {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonc.AppendString(append(b, `{"sub":`...), s.Sub)
			if s.Args != "" {
				b = jsonc.AppendString(append(b, `,"args":`...), s.Args)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if f.Note != "" {
		if f.Text != "" || len(f.Steps) > 0 {
			b = append(b, ',')
		}
		b = jsonc.AppendString(append(b, `"note":`...), f.Note)
	}
	return append(b, '}')
}
