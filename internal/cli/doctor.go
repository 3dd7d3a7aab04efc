package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/netproxy"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/sandboxexec"
)

type dockerJSON struct {
	Checked bool     `json:"checked"`
	Running bool     `json:"running"`
	Error   string   `json:"error,omitempty"`
	For     []string `json:"servers,omitempty"`
}

type doctorJSON struct {
	listJSON
	Imports       []mcpconfig.ImportDecl   `json:"imports"`
	ImportTargets []mcpconfig.ImportTarget `json:"importTargets"`
	Warnings      []gate.Warning           `json:"warnings"`
	Docker        dockerJSON               `json:"docker"`
	Attention     bool                     `json:"attention"`
	// Protected is the registry: every file and folder no agent tool call
	// may write (package registry).
	Protected []registry.Entry `json:"protected"`
	// Sandbox is what confines the agent's commands on this machine.
	Sandbox sandbox.Status `json:"sandbox"`
	// Host is the Pi that runs here and what it does with MCP.
	Host hostJSON `json:"host"`
	// Tools are the servers whose catalogue differs from its pin or hides
	// content (issue 21), by name.
	Tools map[string]ops.Tools `json:"tools"`
	// Stopped are the servers whose last confined run failed, by name.
	Stopped map[string]lastRunJSON `json:"stopped"`
	// Quarantines are this project's unexamined quarantines: what a
	// session changed in its git and Pi files, put back (piagent pi does
	// not start until each is accepted or discarded).
	Quarantines []*baseline.Quarantine `json:"quarantines"`
	// NetRefused are the connections the network proxy refused in the
	// last week (issue 44), one per host, port and caller.
	NetRefused []netproxy.Refused `json:"networkRefused"`
	// Watch says when the record those files are compared with is taken.
	Watch string `json:"watch"`
}

// hostJSON is ops.Host: the Pi that runs here, and what its version
// implies.
type hostJSON = ops.Host

// dockerCheck runs `docker info`, only here and only when a server needs it.
var dockerCheck = func(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func (a *app) doctorData(c *cobra.Command, g *gate.Gate) doctorJSON {
	d := doctorJSON{listJSON: a.listData(g), Imports: g.View.Imports, Warnings: g.Warnings, Attention: g.NeedsAttention(),
		Protected: g.Registry(executables(), nil), Sandbox: sandbox.Probe(), Host: a.host(g), Tools: map[string]ops.Tools{}, Stopped: map[string]lastRunJSON{}}
	for i := range g.Servers {
		s := &g.Servers[i]
		if gate.Blocks(s.State) {
			continue
		}
		if v := a.op().Tools(g, s); v.Err != "" || v.Waiting() {
			d.Tools[s.Name] = v
			d.Attention = true
		}
	}
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.State == gate.Disabled {
			continue
		}
		if r, ok := a.lastFailure(g.Project, s.Name); ok {
			d.Stopped[s.Name] = lastRunJSON{Record: r, Text: a.failureText(r), Fix: a.failureFix(r)}
			d.Attention = true
		}
	}
	d.NetRefused = netproxy.Recent(sandboxexec.NetLog(a.env.Home), time.Now().Add(-7*24*time.Hour), 20)
	if d.NetRefused == nil {
		d.NetRefused = []netproxy.Refused{}
	}
	d.Quarantines, _ = baseline.Pending(a.env.Home, g.View.Cwd)
	if d.Quarantines == nil {
		d.Quarantines = []*baseline.Quarantine{}
	}
	if len(d.Quarantines) > 0 {
		d.Attention = true
	}
	d.Watch = watchText
	for _, t := range g.View.ImportTargets {
		if t.Status != mcpconfig.TargetMissing {
			d.ImportTargets = append(d.ImportTargets, t)
		}
	}
	if d.Imports == nil {
		d.Imports = []mcpconfig.ImportDecl{}
	}
	if d.ImportTargets == nil {
		d.ImportTargets = []mcpconfig.ImportTarget{}
	}
	if d.Host.Pi != "" && !d.Host.Extension {
		// Pi is here and nothing of piagent's runs in it.
		d.Attention = true
	}
	d.Warnings = append(slices.Clone(d.Warnings), startupWarnings(g)...)
	if a.op().Confine(g.View.Cwd) == nil {
		d.Warnings = append(d.Warnings, gate.Warning{Code: "server-sandbox-off",
			Text: "serverSandbox is off in your policy: every server piagent pi starts runs with everything you have (credentials, piagent's and Pi's files)"})
	}
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.State == gate.Disabled || s.Config == nil {
			continue
		}
		owner := ops.Owners(s)
		if c := ops.Confinement(s, g.View.Cwd); strings.HasPrefix(c, "not confined") {
			d.Warnings = append(d.Warnings, gate.Warning{Code: "not-confined", Server: s.Name, Text: c})
		}
		for _, f := range ops.CodeFlags(s, owner, g.View.Cwd) {
			d.Warnings = append(d.Warnings, gate.Warning{Code: f.Code, Server: s.Name, File: f.File, Text: f.Text})
		}
	}
	d.Warnings = append(d.Warnings, piCacheWarnings(tempDir(a.env), d.Sandbox.Mechanism != "")...)
	if d.Warnings == nil {
		d.Warnings = []gate.Warning{}
	}
	for _, s := range g.Servers {
		if cmd, _ := s.Config.Entry["command"].(string); cmd == "docker" && s.State != gate.Disabled {
			d.Docker.For = append(d.Docker.For, s.Name)
		}
	}
	if len(d.Docker.For) > 0 {
		d.Docker.Checked = true
		if err := dockerCheck(c.Context()); err != nil {
			d.Docker.Error = err.Error()
		} else {
			d.Docker.Running = true
		}
	}
	return d
}

func (a *app) doctorCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Explain every server's state, what it needs and the command that fixes it; exit 1 when MCP needs attention",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		d := a.doctorData(c, g)
		if *asJSON {
			if err := a.writeJSON(d); err != nil {
				return err
			}
		} else {
			a.printDoctor(g, d)
		}
		if d.Attention {
			return attention()
		}
		return nil
	})
	return c
}

func (a *app) printDoctor(g *gate.Gate, d doctorJSON) {
	w := a.env.Stdout
	disp := func(p string) string { return ops.Display(a.env.Home, g.View.Cwd, p) }
	fmt.Fprintf(w, "project: %s\n", g.Project)
	if g.View.Exclusive {
		fmt.Fprintf(w, "mode: exclusive (PI_MCP_CONFIG_MODE): only %s is read\n", disp(layerPath(g.View, mcpconfig.LayerPiGlobal)))
	}
	for _, b := range g.Blocks {
		fmt.Fprintf(w, "\nBLOCKED: every tool call is blocked: %s\n", b.Reason)
		for _, f := range b.Files {
			fmt.Fprintf(w, "  file: %s\n", disp(f))
		}
		fmt.Fprintf(w, "  fix: %s\n", a.fix(b.Fix))
	}
	if len(g.Servers) == 0 {
		fmt.Fprintf(w, "\nNo MCP servers configured: add pinned ones with '%s preset core', or your own with '%s add NAME -- COMMAND'\n", a.mcpCmd(), a.mcpCmd())
	} else {
		fmt.Fprintf(w, "\nservers:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range g.Servers {
			reason := s.Reason
			if reason == s.State {
				reason = "" // "ready  ready" says nothing twice
			}
			line := fmt.Sprintf("  %s\t%s\t%s", s.Name, s.State, reason)
			if !s.Fix.IsZero() {
				line += "\t→ " + a.fix(s.Fix)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	for _, s := range g.Servers {
		if v, ok := d.Tools[s.Name]; ok {
			fmt.Fprintf(w, "\n%s offers the model something new (→ %s approve %s --tools after reading it):\n", s.Name, a.mcpCmd(), s.Name)
			printTools(w, v, s.Name)
		}
	}
	for _, s := range g.Servers {
		if r, ok := d.Stopped[s.Name]; ok {
			fmt.Fprintf(w, "\n%s %s\n  fix: %s\n", s.Name, r.Text, r.Fix)
		}
	}
	if len(d.NetRefused) > 0 {
		fmt.Fprintf(w, "\nnetwork: the proxy refused, in the last week:\n")
		for _, r := range d.NetRefused {
			fmt.Fprintf(w, "  %s:%d\t%s\t%d×, last %s\n    fix: %s\n", r.Host, r.Port, r.Who, r.Count, r.Time.Local().Format("2006-01-02 15:04"), r.Fix)
		}
	}
	if d.Docker.Checked {
		if d.Docker.Running {
			fmt.Fprintf(w, "\ndocker: running (needed by %s)\n", strings.Join(d.Docker.For, ", "))
		} else {
			fmt.Fprintf(w, "\ndocker: not available (%s); needed by %s: start Docker\n", d.Docker.Error, strings.Join(d.Docker.For, ", "))
		}
	}
	if len(g.View.Imports) > 0 || len(d.ImportTargets) > 0 {
		fmt.Fprintf(w, "\nimports:\n")
		for _, imp := range g.View.Imports {
			owner := ""
			if imp.Repository {
				owner = " (repository)"
			}
			fmt.Fprintf(w, "  %s imports %s%s\n", disp(imp.File), strings.Join(imp.Kinds, ", "), owner)
		}
		for _, t := range d.ImportTargets {
			switch t.Status {
			case mcpconfig.TargetUnreadable:
				where := at(disp(t.Path), t.Line, t.Column)
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
	if len(g.View.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped files (the adapter ignores them whole):\n")
		for _, s := range g.View.Skipped {
			where := at(disp(s.Path), s.Line, s.Column)
			fmt.Fprintf(w, "  %s: %s\n", where, s.Reason)
		}
	}
	h := d.Host
	if h.Pi == "" {
		fmt.Fprintf(w, "\npi: not found (PIAGENT_PI, or pi on PATH)\n")
	} else {
		fmt.Fprintf(w, "\npi: %s (%s)\n", orDash(h.Version), disp(h.Pi))
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
		fmt.Fprintf(w, "  %s skips: %s\n", mcpconfig.BuiltinProvenance, e)
	}
	trust := "not decided (Pi asks; without a UI it ignores the project's .pi files)"
	switch {
	case h.Trust.Err != "":
		trust = "unreadable: " + h.Trust.Err
	case h.Trust.Decided && h.Trust.From != g.View.Cwd:
		trust = fmt.Sprintf("%v, inherited from %s", map[bool]string{true: "trusted", false: "not trusted"}[h.Trust.Trusted], disp(h.Trust.From))
	case h.Trust.Decided:
		trust = map[bool]string{true: "trusted", false: "not trusted"}[h.Trust.Trusted]
	}
	fmt.Fprintf(w, "project trust: %s\n", trust)
	for _, m := range h.Meaning {
		fmt.Fprintf(w, "  %s\n", m)
	}
	fmt.Fprintf(w, "\nsandbox: %s\n", sandboxLine(d.Sandbox))
	fmt.Fprintf(w, "watch: %s\n", d.Watch)
	for _, q := range d.Quarantines {
		fmt.Fprintf(w, "  QUARANTINE %s (%s): %s put back; piagent pi will not start here until you look: piagent quarantine show %s\n",
			q.ID, q.Source, strings.Join(changedPaths(q), ", "), q.ID)
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

func layerPath(v *mcpconfig.View, id string) string {
	for _, l := range v.Layers {
		if l.ID == id {
			return l.Path
		}
	}
	return ""
}

// notice is the gate's session notice, spelled the way the user typed.
func (a *app) notice(g *gate.Gate) []string {
	out := g.Notice(a.mcpCmd())
	for _, s := range g.Servers {
		if s.State == gate.Disabled {
			continue
		}
		if r, ok := a.lastFailure(g.Project, s.Name); ok {
			out = append(out, r.Notice(a.mcpCmd(), sandbox.ServerStateDir(sandbox.Input{Home: a.env.Home, Project: g.Project}, s.Name)))
		}
	}
	return out
}

func (a *app) noticeCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "notice",
		Short: "Print the session notice: servers waiting for a decision or missing setup (PIAGENT_NO_MCP_NOTICE=1 silences it)",
		Args:  cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON: {\"notice\": [lines]}")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		if a.env.Getenv("PIAGENT_NO_MCP_NOTICE") == "1" {
			if *asJSON {
				return a.writeJSON(map[string][]string{"notice": {}})
			}
			return nil
		}
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		if *asJSON {
			lines := a.notice(g)
			if lines == nil {
				lines = []string{}
			}
			return a.writeJSON(map[string][]string{"notice": lines})
		}
		for _, l := range a.notice(g) {
			fmt.Fprintln(a.env.Stdout, l)
		}
		return nil
	})
	return c
}

// sandboxLine says in one line what confines the agent's commands here.
func sandboxLine(st sandbox.Status) string {
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

// host describes the Pi that runs here (ops.Host).
func (a *app) host(g *gate.Gate) hostJSON { return a.op().Host(g, extensionDir(a.env.Home)) }

// piCacheWarnings: plain pi keeps the code it loads at its next start
// (jiti's transpiled extensions, piagent's guard among them, and Node's
// compile cache) in the shared temporary folder; piagent pi moves them to
// ~/.pi/piagent/tmp (issue 38). Warned when someone else could write them,
// or when no sandbox keeps the agent's commands from doing so.
func piCacheWarnings(tmp string, sandboxed bool) []gate.Warning {
	var out []gate.Warning
	for _, c := range launch.PiCaches {
		dir := filepath.Join(tmp, c)
		if why := launch.ForeignCache(dir); why != "" {
			out = append(out, gate.Warning{Code: "pi-cache-foreign", File: dir,
				Text: "plain pi loads code from this folder at its start, and " + why + ": whoever can write it runs code in Pi; remove it (rm -rf " + dir + ") and start Pi with piagent pi, which keeps Pi's caches in ~/.pi/piagent/tmp"})
		} else if !sandboxed {
			if _, err := os.Lstat(dir); err == nil {
				out = append(out, gate.Warning{Code: "pi-cache-writable", File: dir,
					Text: "plain pi loads code from this folder at its start, and with no sandbox here the agent's commands can write it; start Pi with piagent pi, which keeps Pi's caches in ~/.pi/piagent/tmp"})
			}
		}
	}
	return out
}

// watchText says when the record of the project's git and Pi files is
// taken, the one a session's changes are compared with and put back from.
const watchText = "piagent pi records .git/hooks, .git/config, .git/info, .git/commondir, .git/worktrees and .pi before Pi and any server start, and puts back what a session changes there; under a plain pi the record is taken at the session's first tool call, after servers started"
