package ops

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/netlog"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/sandboxexec"
	"github.com/piagent/piagent/internal/serverrun"
)

// Docker is whether Docker answers, asked only when a server needs it.
type Docker struct {
	Checked bool     `json:"checked"`
	Running bool     `json:"running"`
	Error   string   `json:"error,omitempty"`
	For     []string `json:"servers,omitempty"`
}

// LastRun is how a server's last confined run ended, when it failed: the
// sandbox may have stopped it. Fix is worded by the edge (it names the
// grant to run).
type LastRun struct {
	serverrun.Record
	Text string `json:"text"`
	Fix  string `json:"fix"`
}

// Findings are doctor's account of a project beyond its list of servers.
type Findings struct {
	Imports       []mcpconfig.ImportDecl   `json:"imports"`
	ImportTargets []mcpconfig.ImportTarget `json:"importTargets"`
	Warnings      []gate.Warning           `json:"warnings"`
	Docker        Docker                   `json:"docker"`
	Attention     bool                     `json:"attention"`
	// Protected is the registry: every file and folder no agent tool call
	// may write (package registry).
	Protected []registry.Entry `json:"protected"`
	// Sandbox is what confines the agent's commands on this machine.
	Sandbox sandbox.Status `json:"sandbox"`
	// Host is the Pi that runs here and what it does with MCP.
	Host Host `json:"host"`
	// Tools are the servers whose catalogue differs from its pin or hides
	// content (issue 21), by name.
	Tools map[string]Tools `json:"tools"`
	// Stopped are the servers whose last confined run failed, by name.
	Stopped map[string]LastRun `json:"stopped"`
	// Quarantines are this project's unexamined quarantines: what a
	// session changed in its git and Pi files, put back (piagent pi does
	// not start until each is accepted or discarded).
	Quarantines []*baseline.Quarantine `json:"quarantines"`
	// NetRefused are the connections the network proxy refused in the
	// last week (issue 44), one per host, port and caller.
	NetRefused []netlog.Refused `json:"networkRefused"`
	// Watch says when the record those files are compared with is taken.
	Watch string `json:"watch"`
}

// WatchText says when the record of the project's git and Pi files is
// taken, the one a session's changes are compared with and put back from.
const WatchText = "piagent pi records .git/hooks, .git/config, .git/info, .git/commondir, .git/worktrees and .pi before Pi and any server start, and puts back what a session changes there; under a plain pi the record is taken at the session's first tool call, after servers started"

// DiagnoseOptions are what doctor's diagnosis needs of the edge.
type DiagnoseOptions struct {
	Extension string // where piagent's extension of this version lives
	Tmp       string // the temporary folder plain pi uses
	// Prog is the command a stopped server's fix names (piagent-mcp, or
	// piagent mcp).
	Prog string
}

// Diagnose is what doctor says of the project beyond its servers' states:
// the servers whose tools or last run need a person, the network's
// refusals, the quarantines, the warnings, the Pi that runs here, Docker.
func (o *Ops) Diagnose(g *gate.Gate, opt DiagnoseOptions) Findings {
	d := Findings{Imports: g.View.Imports, Warnings: g.Warnings, Attention: g.NeedsAttention(),
		Protected: g.Registry(o.Binaries, nil), Sandbox: sandbox.Probe(), Host: o.Host(g, opt.Extension), Tools: map[string]Tools{}, Stopped: map[string]LastRun{}}
	for i := range g.Servers {
		s := &g.Servers[i]
		if gate.Blocks(s.State) {
			continue
		}
		if v := o.Tools(g, s); v.Err != "" || v.Waiting() {
			d.Tools[s.Name] = v
			d.Attention = true
		}
	}
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.State == gate.Disabled {
			continue
		}
		if lr, ok := o.LastRun(g.Project, s.Name, opt.Prog); ok {
			d.Stopped[s.Name] = lr
			d.Attention = true
		}
	}
	d.NetRefused = netlog.Recent(sandboxexec.NetLog(o.Home), time.Now().Add(-7*24*time.Hour), 20)
	if d.NetRefused == nil {
		d.NetRefused = []netlog.Refused{}
	}
	d.Quarantines, _ = baseline.Pending(o.Home, g.View.Cwd)
	if d.Quarantines == nil {
		d.Quarantines = []*baseline.Quarantine{}
	}
	if len(d.Quarantines) > 0 {
		d.Attention = true
	}
	d.Watch = WatchText
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
	d.Warnings = append(slices.Clone(d.Warnings), StartupWarnings(g)...)
	if o.Confine(g.View.Cwd) == nil {
		d.Warnings = append(d.Warnings, gate.Warning{Code: "server-sandbox-off",
			Text: "serverSandbox is off in your policy: every server piagent pi starts runs with everything you have (credentials, piagent's and Pi's files)"})
	}
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.State == gate.Disabled || s.Config == nil {
			continue
		}
		if c := Confinement(s, g.View.Cwd); strings.HasPrefix(c, "not confined") {
			d.Warnings = append(d.Warnings, gate.Warning{Code: "not-confined", Server: s.Name, Text: c})
		}
		for _, f := range CodeFlags(s, Owners(s), g.View.Cwd) {
			d.Warnings = append(d.Warnings, gate.Warning{Code: f.Code, Server: s.Name, File: f.File, Text: f.Text})
		}
	}
	d.Warnings = append(d.Warnings, PiCacheWarnings(opt.Tmp, d.Sandbox.Mechanism != "")...)
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
		if err := o.DockerAnswers(); err != nil {
			d.Docker.Error = said(err)
		} else {
			d.Docker.Running = true
		}
	}
	return d
}

// LastRun is server name's last run in project when it failed (the
// sandbox may have stopped it): the record, what happened, and the grant
// that lets it through, worded for prog. get and doctor show it; the
// session notice says it in one line (engine.StoppedNotice).
func (o *Ops) LastRun(project, name, prog string) (LastRun, bool) {
	r, dir, ok := engine.LastFailure(o.Home, project, name)
	if !ok {
		return LastRun{}, false
	}
	return LastRun{Record: r, Text: r.Text(), Fix: r.Fix(prog, dir)}, true
}

// Notice is the session notice for g, worded for prog: the gate's lines,
// then a line for each server the sandbox may have stopped (the lines the
// extension's state carries).
func (o *Ops) Notice(g *gate.Gate, prog string) []string {
	return append(g.Notice(prog), engine.StoppedNotice(o.Home, g, prog)...)
}

// StartupWarnings are doctor's warnings for the unapproved repository
// servers the adapter could start before any tool call when Pi runs without
// the launcher. They do not change doctor's exit status.
func StartupWarnings(g *gate.Gate) []gate.Warning {
	_, err := os.Stat(registry.AdapterCache(g.View.AgentDir))
	var out []gate.Warning
	for _, r := range gate.StartupRisk(g, err == nil) {
		out = append(out, gate.Warning{Code: "startup-risk", Server: r.Server,
			Text: "without the launcher the adapter may start it before any tool call: " + r.Why + "; start Pi with 'piagent pi'"})
	}
	return out
}

// PiCacheWarnings: plain pi keeps the code it loads at its next start
// (jiti's transpiled extensions, piagent's guard among them, and Node's
// compile cache) in the shared temporary folder; piagent pi moves them to
// ~/.pi/piagent/tmp (issue 38). Warned when someone else could write them,
// or when no sandbox keeps the agent's commands from doing so.
func PiCacheWarnings(tmp string, sandboxed bool) []gate.Warning {
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
