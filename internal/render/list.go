package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/ops"
)

// ListJSON writes l (its servers left out) and then rows as JSON would
// write l whole, a server at a time: 10,000 servers are never one
// document in memory.
func (p *Printer) ListJSON(l ops.List, rows iter.Seq[ops.Row]) error {
	lw := &layoutWriter{w: bufio.NewWriterSize(p.Out, 64<<10)}
	// encode writes v compact, as JSON's encoder does, without its newline
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	encode := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := lw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	lw.Write([]byte(`{"project":`))
	if err := encode(l.Project); err != nil {
		return err
	}
	lw.Write([]byte(`,"servers":[`))
	// The rows are laid out as they are written (Row.AppendJSON); the
	// layout then goes on as if it had seen them: in the array, past its
	// first element.
	var b []byte
	first := true
	for row := range rows {
		b = b[:0]
		if first {
			lw.opened, lw.depth, first = false, 2, false
		} else {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = row.AppendJSON(b)
		lw.w.Write(b)
	}
	lw.Write([]byte("],"))
	buf.Reset()
	if err := enc.Encode(l.ListTail); err != nil {
		return err
	}
	lw.Write(buf.Bytes()[1:]) // after its {, with the encoder's newline
	return lw.w.Flush()
}

// Table prints list's table of servers, and on stderr the hints of each.
func (p *Printer) Table(l ops.List) {
	if len(l.Servers) == 0 {
		fmt.Fprintln(p.Err, "No MCP servers configured")
		fmt.Fprintf(p.Err, "add pinned ones with '%s preset core' ('%s preset' lists the presets), or your own with '%s add NAME -- COMMAND [ARGS...]'\n", p.Cmd, p.Cmd, p.Cmd)
		return
	}
	rows := make([][6]string, 0, len(l.Servers)+1)
	rows = append(rows, [6]string{"NAME", "SCOPE", "STATE", "TRANSPORT", "TARGET", "SOURCE"})
	for _, s := range l.Servers {
		src := p.disp(l.Cwd, s.Source.File)
		if s.Source.Kind != "" {
			src += " (" + s.Source.Kind + ")"
		}
		if !s.AdapterLoads {
			src += " [not loaded by the adapter]"
		}
		rows = append(rows, [6]string{s.Name, s.Scope, s.State, s.Transport, s.Target, src})
	}
	FitTable(rows, p.Width)
	if p.Colour {
		colourStates(rows, l.Servers)
	}
	tw := tabwriter.NewWriter(p.Out, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r[0], r[1], r[2], r[3], r[4], r[5])
	}
	tw.Flush()
	for _, s := range l.Servers {
		for _, h := range s.Hints {
			fmt.Fprintf(p.Err, "%s: hint: %s %s\n", p.Name, s.Name, h)
		}
	}
}

// colourStates colours the STATE column for a terminal: ready green, a state
// that stops tool calls red, the rest (setup hints) yellow. Every cell,
// the header's too, gains the same number of bytes, so the tabwriter's
// columns stay aligned.
func colourStates(rows [][6]string, servers []ops.Row) {
	for i := range rows {
		code := "\x1b[39m" // the header: default colour
		switch {
		case i == 0:
		case servers[i-1].State == ops.Ready:
			code = "\x1b[32m"
		case servers[i-1].Blocking:
			code = "\x1b[31m"
		default:
			code = "\x1b[33m"
		}
		rows[i][2] = code + rows[i][2] + "\x1b[0m"
	}
}

// FitTable clips the TARGET and SOURCE columns so that the table fits a
// terminal width columns wide (0: no terminal, nothing clipped). Each keeps
// at least 16 columns; --json and a pipe always get every value whole.
func FitTable(rows [][6]string, width int) {
	if width <= 0 {
		return
	}
	var w [6]int
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	total := w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + 2*5
	for total > width {
		// Take from the wider of the two, one column at a time.
		i := 4
		if w[5] > w[4] {
			i = 5
		}
		if w[i] <= 16 {
			break
		}
		w[i]--
		total--
	}
	for k := range rows[1:] {
		r := &rows[k+1]
		r[4], r[5] = Clip(r[4], max(w[4], 16)), Clip(r[5], max(w[5], 16))
	}
}

// Clip cuts s to n runes, its last an ellipsis when cut.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Skipped names on stderr every config file that exists but was not used,
// and every entry of a file read that was left out.
func (p *Printer) Skipped(l ops.List) {
	for _, s := range l.Skipped {
		where := At(p.disp(l.Cwd, s.Path), s.Line, s.Column)
		fmt.Fprintf(p.Err, "%s: warning: skipped %s: %s\n", p.Name, where, s.Reason)
	}
	for _, s := range l.Ignored {
		fmt.Fprintf(p.Err, "%s: warning: in %s, %s\n", p.Name, p.disp(l.Cwd, s.Path), s.Reason)
	}
}

// Blocks explains every full-block state on stderr.
func (p *Printer) Blocks(l ops.List) {
	for _, b := range l.Blocks {
		fmt.Fprintf(p.Err, "%s: error: every tool call is blocked: %s\n", p.Name, b.Reason)
		for _, f := range b.Files {
			fmt.Fprintf(p.Err, "%s: hint: fix in %s\n", p.Name, p.disp(l.Cwd, f))
		}
		fmt.Fprintf(p.Err, "%s: hint: %s\n", p.Name, b.Fix)
	}
}

// At renders a position in a file as path:line:column, or the path alone
// when the line is not known.
func At(path string, line, col int) string {
	if line <= 0 {
		return path
	}
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}
