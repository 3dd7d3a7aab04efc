package render

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/piagent/piagent/internal/ops"
)

// Policy words policy show's view, and on stderr what a repository tried
// to loosen.
func (p *Printer) Policy(out *ops.PolicyView) {
	w := p.Out
	fmt.Fprintf(w, "mode: %s (%s)\nregistry: %s\nprofile: %s\n", out.EffectiveMode, out.Why, out.RegistryMode, out.PermissionProfile)
	fmt.Fprintf(w, "sandbox: %s (%s)\n", out.Sandbox, SandboxLine(out.SandboxStatus))
	fmt.Fprintf(w, "protected paths:\n  %s\n", strings.Join(out.ProtectedPaths, "\n  "))
	fmt.Fprintf(w, "protected from the shell:\n  %s\n", strings.Join(out.ShellProtected, "\n  "))
	fmt.Fprintf(w, "readable despite the above:\n  %s\n", strings.Join(out.AllowReadPaths, "\n  "))
	fmt.Fprintln(w, "sources:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range out.Sources {
		file := s.File
		if file == "" {
			file = "(embedded)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Field, Clip(s.Value, 50), s.Layer, file)
	}
	tw.Flush()
	for _, v := range out.Violations {
		fmt.Fprintf(p.Err, "%s: warning: %s: %s: %s (ignored: a repository can only tighten the policy)\n", p.Name, v.File, v.Field, v.Reason)
	}
}

// CallDecision says what policy check decided of a tool call: the action
// and code, the rule and subject, then the reason.
func (p *Printer) CallDecision(d ops.CallDecision) {
	w := p.Out
	fmt.Fprintf(w, "%s %s", d.Action, d.Code)
	if d.Rule != "" {
		fmt.Fprintf(w, " rule=%s", d.Rule)
	}
	if d.Subject != "" {
		fmt.Fprintf(w, " subject=%s", d.Subject)
	}
	fmt.Fprintln(w)
	if d.Reason != "" {
		fmt.Fprintln(w, d.Reason)
	}
}
