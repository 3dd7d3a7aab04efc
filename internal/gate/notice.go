package gate

// Note is one line of the session notice: what needs attention, and its
// fix as data. Lead joins the two when the line is worded ("fix: ", or ""
// when the fix reads on from the text).
type Note struct {
	Text string `json:"text"`
	Fix  Fix    `json:"fix,omitzero"`
	Lead string `json:"-"`
}

// Render words the line with prog as the command of its fix.
func (n Note) Render(prog string) string {
	if n.Fix.IsZero() {
		return n.Text
	}
	return n.Text + "; " + n.Lead + n.Fix.Render(prog)
}

// Notes is the session notice: one line per full-block state and per
// server waiting for a decision or missing setup, each with its fix; empty
// when nothing needs attention. oauth is never reported: piagent cannot
// tell a stale login from a good one, so a line every session would be
// noise.
func (g *Gate) Notes() []Note {
	var out []Note
	for _, b := range g.Blocks {
		out = append(out, Note{Text: "piagent: every tool call is blocked: " + b.Reason, Fix: b.Fix})
	}
	for _, s := range g.Servers {
		switch s.State {
		case PendingApproval, ApprovalChanged, NeedsCommand, NeedsEnv:
			out = append(out, Note{Text: "piagent: MCP server " + s.Name + " is " + s.State + " (" + s.Reason + ")", Fix: s.Fix, Lead: "fix: "})
		}
	}
	return out
}

// Notice is Notes worded, with prog as the command of each fix.
func (g *Gate) Notice(prog string) []string {
	var out []string
	for _, n := range g.Notes() {
		out = append(out, n.Render(prog))
	}
	return out
}
