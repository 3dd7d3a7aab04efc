package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
)

// projectDir is --project, or the working directory, made absolute
// (ops.ProjectDir).
func (a *app) projectDir(c *cobra.Command) (string, error) {
	p, _ := c.Flags().GetString("project")
	return a.op().ProjectDir(p)
}

// refuseGiven refuses the first of flags given on the command line, with
// format's usage error (it takes the flag's name).
func refuseGiven(c *cobra.Command, format string, flags ...string) error {
	for _, f := range flags {
		if c.Flags().Changed(f) {
			return usagef(format, f)
		}
	}
	return nil
}

// gate computes the gate for the command's project.
func (a *app) gate(c *cobra.Command) (*gate.Gate, error) {
	dir, err := a.projectDir(c)
	if err != nil {
		return nil, err
	}
	return a.op().Gate(dir)
}

// writeJSON prints v as indented JSON on stdout.
func (a *app) writeJSON(v any) error {
	lw := &layoutWriter{w: bufio.NewWriterSize(a.env.Stdout, 64<<10)}
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

// completeServers offers the project's server names.
func (a *app) completeServers(filter func(*gate.Server) bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		g, err := a.gate(c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for i := range g.Servers {
			s := &g.Servers[i]
			if strings.HasPrefix(s.Name, toComplete) && (filter == nil || filter(s)) && !slices.Contains(out, s.Name) {
				out = append(out, cobra.CompletionWithDesc(s.Name, s.State))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
