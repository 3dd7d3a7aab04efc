package gate

import "fmt"

// Notice is the session notice: one line per full-block state and per server
// waiting for a decision or missing setup, each with its fix; empty when
// nothing needs attention. oauth is never reported: piagent cannot tell a
// stale login from a good one, so a line every session would be noise.
// prog is the command the fixes are worded with.
func (g *Gate) Notice(prog string) []string {
	var out []string
	for _, b := range g.Blocks {
		out = append(out, fmt.Sprintf("piagent: every tool call is blocked: %s; %s", b.Reason, b.Fix.Render(prog)))
	}
	for _, s := range g.Servers {
		switch s.State {
		case PendingApproval, ApprovalChanged, NeedsCommand, NeedsEnv:
			out = append(out, fmt.Sprintf("piagent: MCP server %s is %s (%s); fix: %s", s.Name, s.State, s.Reason, s.Fix.Render(prog)))
		}
	}
	return out
}
