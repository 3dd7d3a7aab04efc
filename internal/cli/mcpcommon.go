package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/secret"
)

// projectDir is --project, or the working directory, made absolute.
func (a *app) projectDir(c *cobra.Command) (string, error) {
	p, _ := c.Flags().GetString("project")
	if p == "" {
		p = a.env.Dir
	}
	p = paths.Expand(a.env.Home, p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.env.Dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", usagef("project %s: %v", p, unwrapPathErr(err))
	}
	if !fi.IsDir() {
		return "", usagef("project %s is not a directory", p)
	}
	return filepath.Clean(p), nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// gate computes the gate for the command's project.
func (a *app) gate(c *cobra.Command) (*gate.Gate, error) {
	dir, err := a.projectDir(c)
	if err != nil {
		return nil, err
	}
	return a.gateAt(dir)
}

// gateAt computes the gate for the project at dir.
func (a *app) gateAt(dir string) (*gate.Gate, error) {
	if a.env.Home == "" {
		return nil, refused(paths.ErrNoHome)
	}
	g, err := gate.Load(gate.Options{Home: a.env.Home, Cwd: dir, Getenv: gate.RealEnv(a.env.Getenv)})
	if err != nil {
		return nil, refused(err)
	}
	return g, nil
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

// transport names how the adapter reaches a server.
func transport(e mcpconfig.Entry) string {
	n := 0
	t := ""
	if _, ok := e["command"].(string); ok {
		n, t = n+1, "stdio"
	}
	if _, ok := e["url"].(string); ok {
		n, t = n+1, "http"
	}
	if _, ok := e["socket"].(string); ok {
		n, t = n+1, "socket"
	}
	if n != 1 {
		return "invalid"
	}
	return t
}

// target is what a server runs or reaches, masked. Only the transport keys
// are masked: the rest of the entry never reaches this column.
func target(e mcpconfig.Entry) string {
	masked := func(k string) string {
		if v, ok := e[k].(string); ok {
			return secret.MaskString(v)
		}
		return fmt.Sprint(secret.MaskValue(e[k]))
	}
	switch transport(e) {
	case "stdio":
		var b strings.Builder
		b.Grow(64)
		b.WriteString(masked("command"))
		if args, ok := e["args"].([]any); ok {
			for _, x := range args {
				b.WriteByte(' ')
				if s, ok := x.(string); ok {
					b.WriteString(shellQuote(secret.MaskString(s)))
				} else {
					b.WriteString(shellQuote(fmt.Sprint(secret.MaskValue(x))))
				}
			}
		}
		return b.String()
	case "http":
		return masked("url")
	case "socket":
		return masked("socket")
	}
	return "-"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%_-+=:,./", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
