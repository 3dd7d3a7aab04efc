package gate

import (
	"encoding/json"
	"strings"
)

// Fix is what moves a server or a block on, as data: Text says what to do
// (outside piagent, or before the commands), Steps are the piagent-mcp
// subcommands to run, in order, and Note follows them. The edges word it
// for the command the person types (Render, For); the core never spells a
// program name into a fix.
type Fix struct {
	Text  string
	Steps []Step
	Note  string
	// Quoted puts the commands in quotes (inside a sentence).
	Quoted bool
	prog   string // For's program; "" is piagent-mcp
}

// Step is one piagent-mcp subcommand with its arguments (space-separated
// server names).
type Step struct {
	Sub  string
	Args string
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

// For is the fix worded for prog wherever it is shown or encoded.
func (f Fix) For(prog string) Fix {
	f.prog = prog
	return f
}

// String is the fix worded for piagent-mcp, or for the program For chose.
func (f Fix) String() string {
	if f.prog == "" {
		return f.Render("piagent-mcp")
	}
	return f.Render(f.prog)
}

// MarshalJSON encodes the fix as its words.
func (f Fix) MarshalJSON() ([]byte, error) { return json.Marshal(f.String()) }
