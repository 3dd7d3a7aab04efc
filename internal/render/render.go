// Package render words the operations layer's results for a person, and
// writes its --json answers: the terminal side of the edge. It takes
// internal/ops's values and imports nothing of the core: what it shows is
// what ops returned, and the rules stay there.
package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/piagent/piagent/internal/ops"
)

// Printer writes one invocation's answers: on Out the answer, on Err what
// goes beside it (warnings, hints).
type Printer struct {
	Out, Err io.Writer
	// Name is the program the person typed ("piagent" or "piagent-mcp"),
	// Cmd how the MCP commands are spelled in hints for it.
	Name, Cmd string
	Home      string
	// Width is the terminal's width in columns (0: not a terminal: every
	// column whole); Colour: the table's states may be coloured.
	Width  int
	Colour bool
}

// disp shortens p for a person reading files of the project at cwd.
func (p *Printer) disp(cwd, path string) string { return ops.Display(p.Home, cwd, path) }

// JSON prints v as indented JSON on w.
func JSON(w io.Writer, v any) error {
	lw := &layoutWriter{w: bufio.NewWriterSize(w, 64<<10)}
	enc := json.NewEncoder(lw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return lw.w.Flush()
}

// layoutWriter lays out the compact JSON encoding/json writes through it,
// two spaces a level, exactly as json.Indent would (FuzzIndentJSON), as the
// bytes pass: no copy of the whole document is kept, and it is not scanned
// again for errors (encoding/json wrote it).
type layoutWriter struct {
	w      *bufio.Writer
	depth  int
	inStr  bool
	esc    bool
	opened bool // a { or [ was written and its first element not yet seen
}

// indent is a line break and the spaces of the first levels, cut to size.
var indent = "\n" + strings.Repeat("  ", 32)

func (l *layoutWriter) newline() {
	if n := 1 + 2*l.depth; n <= len(indent) {
		l.w.WriteString(indent[:n])
		return
	}
	l.w.WriteByte('\n')
	for range l.depth {
		l.w.WriteString("  ")
	}
}

func (l *layoutWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if l.inStr {
			// the rest of the string up to a quote or a backslash in one go
			j := i
			if !l.esc {
				j = len(p)
				if k := bytes.IndexByte(p[i:], '"'); k >= 0 {
					j = i + k
				}
				if k := bytes.IndexByte(p[i:j], '\\'); k >= 0 {
					j = i + k
				}
			}
			if j > i {
				l.w.Write(p[i:j])
				i = j - 1
				continue
			}
			l.w.WriteByte(c)
			switch {
			case l.esc:
				l.esc = false
			case c == '\\':
				l.esc = true
			case c == '"':
				l.inStr = false
			}
			continue
		}
		if l.opened {
			l.opened = false
			if c == '}' || c == ']' {
				l.w.WriteByte(c) // {} and [] stay as they are
				continue
			}
			l.depth++
			l.newline()
		}
		switch c {
		case '"':
			l.inStr = true
			l.w.WriteByte(c)
		case '{', '[':
			l.w.WriteByte(c)
			l.opened = true
		case '}', ']':
			l.depth--
			l.newline()
			l.w.WriteByte(c)
		case ',':
			l.w.WriteByte(c)
			l.newline()
		case ':':
			l.w.WriteString(": ")
		default:
			l.w.WriteByte(c)
		}
	}
	return len(p), nil
}

// OrDash is s, or "-" when empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Names is a list of names joined with commas, or "-" when empty.
func Names(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}
