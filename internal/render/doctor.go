package render

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/piagent/piagent/internal/ops"
)

// Doctor prints doctor's account of a project.
func (p *Printer) Doctor(d ops.Doctor) {
	w := p.Out
	disp := func(f string) string { return p.disp(d.Cwd, f) }
	fmt.Fprintf(w, "project: %s\n", d.Project)
	if d.Exclusive {
		fmt.Fprintf(w, "mode: exclusive (PI_MCP_CONFIG_MODE): only %s is read\n", disp(d.ExclusiveFile))
	}
	for _, b := range d.Blocks {
		fmt.Fprintf(w, "\nBLOCKED: every tool call is blocked: %s\n", b.Reason)
		for _, f := range b.Files {
			fmt.Fprintf(w, "  file: %s\n", disp(f))
		}
		fmt.Fprintf(w, "  fix: %s\n", b.Fix)
	}
	if len(d.Servers) == 0 {
		fmt.Fprintf(w, "\nNo MCP servers configured: add pinned ones with '%s preset core', or your own with '%s add NAME -- COMMAND'\n", p.Cmd, p.Cmd)
	} else {
		fmt.Fprintf(w, "\nservers:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range d.Servers {
			reason := s.Reason
			if reason == s.State {
				reason = "" // "ready  ready" says nothing twice
			}
			line := fmt.Sprintf("  %s\t%s\t%s", s.Name, s.State, reason)
			if s.Fix != "" {
				line += "\t→ " + s.Fix
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	for _, s := range d.Servers {
		if v, ok := d.Tools[s.Name]; ok {
			fmt.Fprintf(w, "\n%s offers the model something new (→ %s approve %s --tools after reading it):\n", s.Name, p.Cmd, s.Name)
			Tools(w, v, s.Name)
		}
	}
	for _, s := range d.Servers {
		if r, ok := d.Stopped[s.Name]; ok {
			fmt.Fprintf(w, "\n%s %s\n  fix: %s\n", s.Name, r.Text, r.Fix)
		}
	}
	if len(d.NetRefused) > 0 {
		fmt.Fprintf(w, "\nnetwork: the proxy refused, in the last week:\n")
		for _, r := range d.NetRefused {
			fmt.Fprintf(w, "  %s\t%s\t%d×, last %s\n    fix: %s\n", r.Where(), r.Who, r.Count, r.Time.Local().Format("2006-01-02 15:04"), r.Fix)
		}
	}
	if d.Docker.Checked {
		if d.Docker.Running {
			fmt.Fprintf(w, "\ndocker: running (needed by %s)\n", strings.Join(d.Docker.For, ", "))
		} else {
			fmt.Fprintf(w, "\ndocker: not available (%s); needed by %s: start Docker\n", d.Docker.Error, strings.Join(d.Docker.For, ", "))
		}
	}
	if len(d.Imports) > 0 || len(d.ImportTargets) > 0 {
		fmt.Fprintf(w, "\nimports:\n")
		for _, imp := range d.Imports {
			owner := ""
			if imp.Repository {
				owner = " (repository)"
			}
			fmt.Fprintf(w, "  %s imports %s%s\n", disp(imp.File), strings.Join(imp.Kinds, ", "), owner)
		}
		for _, t := range d.ImportTargets {
			switch t.Status {
			case ops.TargetUnreadable:
				where := At(disp(t.Path), t.Line, t.Column)
				fmt.Fprintf(w, "  %s target %s exists but cannot be read: %s\n", t.Kind, where, t.Error)
			default:
				note := ""
				if !t.Adapter {
					note = " (the tool's real file; the adapter does not read it)"
				}
				fmt.Fprintf(w, "  %s target %s: %s%s\n", t.Kind, disp(t.Path), t.Status, note)
			}
		}
	}
	if len(d.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped files (the adapter ignores them whole):\n")
		for _, s := range d.Skipped {
			where := At(disp(s.Path), s.Line, s.Column)
			fmt.Fprintf(w, "  %s: %s\n", where, s.Reason)
		}
	}
	h := d.Host
	if h.Pi == "" {
		fmt.Fprintf(w, "\npi: not found (PIAGENT_PI, or pi on PATH)\n")
	} else {
		fmt.Fprintf(w, "\npi: %s (%s)\n", OrDash(h.Version), disp(h.Pi))
	}
	adapter := "not installed: MCP servers are off under piagent pi"
	if h.Adapter {
		adapter = "installed, loads after piagent's extension"
		if !h.Ordered {
			adapter = "installed, but loads before piagent's extension (piagent setup fixes the order)"
		}
	}
	if h.Pi != "" && !h.Extension {
		fmt.Fprintf(w, "piagent extension: not installed in Pi: nothing guards its tool calls; run 'piagent setup'\n")
	}
	fmt.Fprintf(w, "pi-mcp-adapter: %s\n", adapter)
	fmt.Fprintf(w, "pi's built-in MCP client: %s\n", h.BuiltinWhy)
	for _, b := range h.BuiltinServers {
		state := b.State
		if !b.Enabled {
			state = "switched off (enabled: false)"
		}
		fmt.Fprintf(w, "  %s: %s, %s (%s)\n", b.Provenance, b.Name, state, disp(b.Source))
	}
	for _, e := range h.BuiltinErrors {
		fmt.Fprintf(w, "  %s skips: %s\n", ops.BuiltinProvenance, e)
	}
	trust := "not decided (Pi asks; without a UI it ignores the project's .pi files)"
	switch {
	case h.Trust.Err != "":
		trust = "unreadable: " + h.Trust.Err
	case h.Trust.Decided && h.Trust.From != d.Cwd:
		trust = fmt.Sprintf("%v, inherited from %s", map[bool]string{true: "trusted", false: "not trusted"}[h.Trust.Trusted], disp(h.Trust.From))
	case h.Trust.Decided:
		trust = map[bool]string{true: "trusted", false: "not trusted"}[h.Trust.Trusted]
	}
	fmt.Fprintf(w, "project trust: %s\n", trust)
	for _, m := range h.Meaning {
		fmt.Fprintf(w, "  %s\n", m)
	}
	fmt.Fprintf(w, "\nsandbox: %s\n", SandboxLine(d.Sandbox))
	fmt.Fprintf(w, "watch: %s\n", d.Watch)
	for _, q := range d.Quarantines {
		fmt.Fprintf(w, "  QUARANTINE %s (%s): %s put back; piagent pi will not start here until you look: piagent quarantine show %s\n",
			q.ID, q.Source, strings.Join(ops.ChangedPaths(q), ", "), q.ID)
	}
	fmt.Fprintf(w, "protected: %d files and folders no agent tool call may write ('piagent sandbox status' lists how each is kept)\n", len(d.Protected))
	if len(d.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n")
		for _, x := range d.Warnings {
			where := ""
			if x.File != "" {
				where = disp(x.File) + ": "
			} else if x.Server != "" {
				where = x.Server + ": "
			}
			fmt.Fprintf(w, "  %s%s\n", where, x.Text)
		}
	}
}

// SandboxLine says in one line what confines the agent's commands here.
func SandboxLine(st ops.SandboxState) string {
	if st.Mechanism == "" {
		return "none: " + st.Missing + "; the agent's commands are checked by the command reader alone"
	}
	mount := "no namespaces (" + st.NamespaceMissing + "): piagent's files inside the project are watched, not locked, and survivors are possible"
	switch st.Namespaces {
	case "root":
		mount = "mount and PID namespaces (root)"
	case "user":
		mount = "user, mount and PID namespaces"
	}
	signals := "signals and abstract sockets scoped to the sandbox"
	if !st.Scoped {
		signals = "signals not scoped (Landlock ABI 6 or later is needed)"
	}
	return fmt.Sprintf("%s ABI %d, %s, Unix sockets refused, %s", st.Mechanism, st.ABI, mount, signals)
}
