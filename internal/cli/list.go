package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/ops"
)

// serverJSON is one row of `list --json`. The field set is a contract
// (pinned by TestListJSONFields): fields may be added, never renamed.
type serverJSON struct {
	Name                 string     `json:"name"`
	Scope                string     `json:"scope"`
	Layer                string     `json:"layer"`
	State                string     `json:"state"`
	Reason               string     `json:"reason"`
	Fix                  string     `json:"fix,omitempty"`
	Transport            string     `json:"transport"`
	Target               string     `json:"target"`
	Source               ops.Source `json:"source"`
	RepositoryControlled bool       `json:"repositoryControlled"`
	RepositoryReason     string     `json:"repositoryReason,omitempty"`
	AdapterLoads         bool       `json:"adapterLoads"`
	Digest               string     `json:"digest,omitempty"`
	MissingEnv           []string   `json:"missingEnv,omitempty"`
	MissingCommand       string     `json:"missingCommand,omitempty"`
	// Hints name what a ready server still needs that piagent can look
	// for but that does not change its state (a browser, say).
	Hints []string `json:"hints,omitempty"`
}

type listJSON struct {
	Project  string       `json:"project"`
	Servers  []serverJSON `json:"servers"`
	listTail              // after the servers, so writeList can stream them
}

func (a *app) serverRow(g *gate.Gate, s *gate.Server) serverJSON {
	cs := s.Config
	return serverJSON{
		Name: s.Name, Scope: cs.Scope, Layer: cs.Layer, State: s.State, Reason: s.Reason, Fix: a.fix(s.Fix),
		Transport: ops.Transport(cs.Entry), Target: ops.Target(cs.Entry), Source: cs.Source,
		RepositoryControlled: cs.RepositoryControlled, RepositoryReason: cs.RepositoryReason,
		AdapterLoads: cs.AdapterLoads, Digest: s.Digest, MissingEnv: s.MissingEnv, MissingCommand: s.Command,
		Hints: a.op().ServerHints(s),
	}
}

func (a *app) listData(g *gate.Gate) listJSON { return a.listDataRows(g, false) }

func (a *app) listDataRows(g *gate.Gate, headerOnly bool) listJSON {
	out := listJSON{Project: g.Project, Servers: []serverJSON{}, listTail: listTail{Skipped: g.View.Skipped, Blocks: []blockJSON{},
		FullBlock: g.FullBlock(), Exclusive: g.View.Exclusive}}
	if out.Skipped == nil {
		out.Skipped = []ops.Skipped{}
	}
	for _, b := range g.Blocks {
		out.Blocks = append(out.Blocks, blockJSON{Code: b.Code, Reason: b.Reason, Files: b.Files, Fix: a.fix(b.Fix)})
	}
	if g.StoreErr != nil {
		out.StoreError = g.StoreErr.Error()
	}
	if !headerOnly {
		for i := range g.Servers {
			out.Servers = append(out.Servers, a.serverRow(g, &g.Servers[i]))
		}
	}
	return out
}

// writeList writes listData(g) as writeJSON would, a server at a time:
// 10,000 servers are never one document in memory.
func (a *app) writeList(g *gate.Gate) error {
	data := a.listDataRows(g, true) // the rows are written one by one below
	lw := &layoutWriter{w: bufio.NewWriterSize(a.env.Stdout, 64<<10)}
	// encode writes v compact, as writeJSON's encoder does, without its
	// newline
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
	if err := encode(data.Project); err != nil {
		return err
	}
	lw.Write([]byte(`,"servers":[`))
	if len(g.Servers) > 0 {
		// The rows are laid out as they are written (appendRow); the
		// layout then goes on as if it had seen them: in the array, past
		// its first element.
		lw.opened, lw.depth = false, 2
		var b []byte
		for i := range g.Servers {
			b = b[:0]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			row := a.serverRow(g, &g.Servers[i])
			b = appendRow(b, &row)
			lw.w.Write(b)
		}
	}
	lw.Write([]byte("],"))
	buf.Reset()
	if err := enc.Encode(data.listTail); err != nil {
		return err
	}
	lw.Write(buf.Bytes()[1:]) // after its {, with the encoder's newline
	return lw.w.Flush()
}

// blockJSON is a full-block state in list --json: the fix in words, for
// the command the person typed.
type blockJSON struct {
	Code   string   `json:"code"`
	Reason string   `json:"reason"`
	Files  []string `json:"files"`
	Fix    string   `json:"fix"`
}

// listTail is listJSON after its servers.
type listTail struct {
	Skipped    []ops.Skipped `json:"skipped"`
	Blocks     []blockJSON   `json:"blocks"`
	FullBlock  bool          `json:"fullBlock"`
	Exclusive  bool          `json:"exclusive"`
	StoreError string        `json:"storeError,omitempty"`
}

func (a *app) listCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List every MCP server the adapter sees, with its scope, state and source",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := a.writeList(g); err != nil {
				return err
			}
		} else {
			a.printTable(g)
		}
		a.printSkipped(g)
		a.printBlocks(g)
		if g.StoreErr != nil {
			// Every repository server reads as undecided: say why, and that
			// nothing here is what the person decided.
			fmt.Fprintf(a.env.Stderr, "%s: error: the approval store cannot be used, so every repository server shows as undecided: %v\n", a.name, g.StoreErr)
			for _, h := range storeHints(a.op().ApprovalStore(), g.StoreErr) {
				fmt.Fprintf(a.env.Stderr, "%s: hint: %s\n", a.name, h)
			}
			return attention()
		}
		if g.FullBlock() {
			return attention()
		}
		return nil
	})
	return c
}

func (a *app) printTable(g *gate.Gate) {
	w := a.env.Stdout
	if len(g.Servers) == 0 {
		fmt.Fprintln(a.env.Stderr, "No MCP servers configured")
		fmt.Fprintf(a.env.Stderr, "add pinned ones with '%s preset core' ('%s preset' lists the presets), or your own with '%s add NAME -- COMMAND [ARGS...]'\n", a.mcpCmd(), a.mcpCmd(), a.mcpCmd())
		return
	}
	rows := make([][6]string, 0, len(g.Servers)+1)
	rows = append(rows, [6]string{"NAME", "SCOPE", "STATE", "TRANSPORT", "TARGET", "SOURCE"})
	for i := range g.Servers {
		s := &g.Servers[i]
		cs := s.Config
		src := ops.Display(a.env.Home, g.View.Cwd, cs.Source.File)
		if cs.Source.Kind != "" {
			src += " (" + cs.Source.Kind + ")"
		}
		if !cs.AdapterLoads {
			src += " [not loaded by the adapter]"
		}
		rows = append(rows, [6]string{s.Name, cs.Scope, s.State, ops.Transport(cs.Entry), ops.Target(cs.Entry), src})
	}
	fitTable(rows, a.env.Width)
	if a.env.Width > 0 && a.env.Getenv("NO_COLOR") == "" {
		colourStates(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r[0], r[1], r[2], r[3], r[4], r[5])
	}
	tw.Flush()
	for i := range g.Servers {
		for _, h := range a.op().ServerHints(&g.Servers[i]) {
			fmt.Fprintf(a.env.Stderr, "%s: hint: %s %s\n", a.name, g.Servers[i].Name, h)
		}
	}
}

// colourStates colours the STATE column for a terminal: ready green, a state
// that stops tool calls red, the rest (setup hints) yellow. Every cell,
// the header's too, gains the same number of bytes, so the tabwriter's
// columns stay aligned.
func colourStates(rows [][6]string) {
	for i := range rows {
		code := "\x1b[39m" // the header: default colour
		switch st := rows[i][2]; {
		case i == 0:
		case st == gate.Ready:
			code = "\x1b[32m"
		case gate.Blocks(st):
			code = "\x1b[31m"
		default:
			code = "\x1b[33m"
		}
		rows[i][2] = code + rows[i][2] + "\x1b[0m"
	}
}

// fitTable clips the TARGET and SOURCE columns so that the table fits a
// terminal width columns wide (0: no terminal, nothing clipped). Each keeps
// at least 16 columns; --json and a pipe always get every value whole.
func fitTable(rows [][6]string, width int) {
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
		r[4], r[5] = clip(r[4], max(w[4], 16)), clip(r[5], max(w[5], 16))
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// printSkipped names every config file that exists but was not used.
func (a *app) printSkipped(g *gate.Gate) {
	for _, s := range g.View.Skipped {
		where := at(ops.Display(a.env.Home, g.View.Cwd, s.Path), s.Line, s.Column)
		fmt.Fprintf(a.env.Stderr, "%s: warning: skipped %s: %s\n", a.name, where, s.Reason)
	}
	for _, s := range g.View.Ignored {
		fmt.Fprintf(a.env.Stderr, "%s: warning: in %s, %s\n", a.name, ops.Display(a.env.Home, g.View.Cwd, s.Path), s.Reason)
	}
}

// printBlocks explains every full-block state on stderr.
func (a *app) printBlocks(g *gate.Gate) {
	for _, b := range g.Blocks {
		fmt.Fprintf(a.env.Stderr, "%s: error: every tool call is blocked: %s\n", a.name, b.Reason)
		for _, f := range b.Files {
			fmt.Fprintf(a.env.Stderr, "%s: hint: fix in %s\n", a.name, ops.Display(a.env.Home, g.View.Cwd, f))
		}
		fmt.Fprintf(a.env.Stderr, "%s: hint: %s\n", a.name, a.fix(b.Fix))
	}
}

// at renders a position in a file as path:line:column, or the path alone
// when the line is not known.
func at(path string, line, col int) string {
	if line <= 0 {
		return path
	}
	return fmt.Sprintf("%s:%d:%d", path, line, col)
}
