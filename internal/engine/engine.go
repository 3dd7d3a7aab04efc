// Package engine is piagent's one answer to "may this run?". It assembles
// what a decision needs — the gate (kept until a file it read changes), the
// adapter's cache and the catalogue pins, the tool policy and the mode, the
// sandbox's status and the file-system facts (where a path leads, what a
// glob or folder holds, whether the work tree is dirty) — from the inputs it
// is given, and decides, redacts, reports and describes. internal/helper
// frames it for the Pi extension; `piagent policy check` asks it directly.
package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/netlog"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/sandboxexec"
	"github.com/piagent/piagent/internal/setup"
	"github.com/piagent/piagent/internal/toolname"
)

// Engine answers for one project. Its exported fields are its inputs; set
// them before the first call. Safe for one caller at a time (the helper
// answers one request after another).
type Engine struct {
	Home, Cwd string
	Getenv    func(string) string
	// LookupEnv tells an empty variable from an unset one (Getenv's
	// environment); nil reads an empty one as unset.
	LookupEnv func(string) (string, bool)
	// Binaries are piagent's own executables: registered, so no call may
	// replace them.
	Binaries []string
	// Protected extends the guard's list of files no call may write.
	Protected []string
	// Sandbox says what confinement this machine offers the agent's
	// commands; nil asks the kernel (sandbox.Probe), once.
	Sandbox func() sandbox.Status

	mu          sync.Mutex
	cache       gate.Cache
	links       linkCache // where paths lead, between changes
	parts       snapshotParts
	snap        *guard.Snapshot
	snapGate    *gate.Gate
	session     *policy.SessionState
	sessionMode string // set by /piagent-mode for this session only
	watch       *integrity
	probe       *sandbox.Status
	optsOnce    sync.Once
	opts        gate.Options
	// hub is the one inotify instance of the gate's, the session's and
	// the link cache's watches (issue 46: one read after an edit, not six)
	hub *fswatch.Hub
	// reported are the catalogues Pi's built-in MCP client registered, as
	// the extension reported them, against their pins (Report).
	reported map[string]*catalogue.State
	// firstSeen are the catalogues pinned at first sight and not yet shown
	// to the person (Withheld hands them to the extension's notice).
	firstSeen []FirstSeen
}

// Error is an answer that is not a decision: bad input (Code "bad-params")
// or a gate that cannot be evaluated ("gate-unavailable").
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badParams(err error) error { return &Error{Code: "bad-params", Message: err.Error()} }

func (en *Engine) getenv(k string) string {
	if en.Getenv == nil {
		return ""
	}
	return en.Getenv(k)
}

// belongs decides whether a cache entry is a server's catalogue: written
// for its merged definition, or for the one this project's launch
// configuration hands the adapter.
func (en *Engine) belongs(g *gate.Gate) func(*gate.Server, mcpcache.ServerEntry) bool {
	return func(s *gate.Server, e mcpcache.ServerEntry) bool {
		defs := []map[string]any{s.Config.Entry}
		if l, ok := launch.Launched(en.Home, g.Project, s.Name); ok {
			defs = append(defs, l)
		}
		return catalogue.Belongs(e, defs, en.lookup, g.View.Home)
	}
}

// askFirst: the person's policy says "firstSight": "ask" (a policy that
// cannot be read asks: the stricter side).
func (en *Engine) askFirst() bool {
	pol, err := policy.LoadSettings(en.Home, en.Cwd)
	return err != nil || pol.FirstSight() == policy.FirstSightAsk
}

// lookup is the environment Pi runs in, as the adapter's interpolation
// reads it (an empty value is not an unset one).
func (en *Engine) lookup(k string) (string, bool) {
	if en.LookupEnv != nil {
		return en.LookupEnv(k)
	}
	v := en.getenv(k)
	return v, v != ""
}

// options are the gate's inputs: fixed for the engine's life, so built once.
func (en *Engine) options() gate.Options {
	en.optsOnce.Do(func() {
		en.hub = fswatch.NewHub()
		en.cache.Hub = en.hub
		en.links.mu.Lock()
		en.links.hub = en.hub
		en.links.mu.Unlock()
		getenv := gate.RealEnv(en.Getenv)
		agentDir := paths.AgentDir(en.Home, en.Cwd, getenv)
		en.opts = gate.Options{Home: en.Home, Cwd: en.Cwd, Getenv: getenv,
			Extra: registry.Watched(registry.List(registry.Input{Home: en.Home, AgentDir: agentDir, Project: en.Cwd}))}
	})
	return en.opts
}

func (en *Engine) gate() (*gate.Gate, error) {
	return en.cache.Get(en.options())
}

// snapshot returns the guard snapshot for the current gate, rebuilding it
// only when the gate was recomputed.
func (en *Engine) snapshot() (*guard.Snapshot, error) {
	return en.build(true)
}

// build is snapshot; with record false (Refresh, between calls) the gate
// is the cache's answer ahead of a call (gate.Cache.Ahead), and a
// catalogue seen for the first time is not pinned. Where either leaves
// work to the next call, nothing is built (nil, nil), and that call
// checks the gate the slow way, or pins the catalogue and shows it to the
// person (Withheld).
func (en *Engine) build(record bool) (*guard.Snapshot, error) {
	var g *gate.Gate
	if record {
		var err error
		if g, err = en.gate(); err != nil {
			return nil, err
		}
	} else if g = en.cache.Ahead(en.options()); g == nil {
		return nil, nil // left to the next call (gate.Cache.Ahead)
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	if g == en.snapGate && en.snap != nil {
		return en.snap, nil
	}
	if en.session == nil {
		en.session = policy.NewSessionState()
	}
	if !g.Refreshes(en.snapGate) || en.snap == nil {
		en.parts = en.snapshotParts(g)
	}
	p := en.parts
	// What each usable server offered the model, against its pin; a
	// first sight is pinned here (record).
	cats, unpinned := en.catalogues(g, p.mc, p.askFirst, record)
	if unpinned {
		return nil, nil
	}
	en.snap = guard.NewSnapshot(g, guard.Options{
		Cache:       p.mc,
		AdapterPath: en.getenv("PIAGENT_ADAPTER_PATH"),
		Protected:   en.Protected,
		Binaries:    en.Binaries,
		Registry:    p.reg,
		RegistrySet: p.set,
		Resolve:     en.links.resolve,
		Policy:      p.pol,
		Facts: policy.Facts{Home: en.Home, Cwd: en.Cwd, ProjectRoot: en.Cwd, RealPath: en.links.realPath, Glob: glob, Tree: tree, HardLinks: hardLinks,
			Mode: p.mode, Session: en.session},
		Catalogues: cats,
	})
	en.snapGate = g
	return en.snap, nil
}

// snapshotParts are what a snapshot takes from the files beside the gate
// (the adapter's cache, the policy with the registry's secrets, the mode),
// all of them in the gate's signature: a gate refreshed from the last one
// (gate.Gate.Refreshes) keeps them, and only the servers' states and
// catalogues are judged again (issue 46: the answer after an edit).
func (en *Engine) snapshotParts(g *gate.Gate) snapshotParts {
	partsComputed.Add(1)
	agentDir := g.View.AgentDir
	mc, err := mcpcache.Load(registry.AdapterCache(agentDir))
	if err != nil {
		mc = nil // the adapter sees no cache either; reverse naming is then by prefix only
	}
	// A policy file that cannot be read yields a policy that blocks every
	// call with the file and position: never a silently weaker policy.
	pol, _ := policy.Load(en.Home, en.Cwd)
	// The registry's secrets (Pi's auth.json and the adapter's tokens
	// wherever the agent dir is, the approval store) are protected paths
	// whatever the policy files say.
	var secretFiles, secretDirs []string
	reg := g.Registry(en.Binaries, en.Protected)
	for _, e := range reg {
		switch {
		case !e.Secret:
		case e.Dir:
			secretDirs = append(secretDirs, e.Path)
		default:
			secretFiles = append(secretFiles, e.Path)
		}
	}
	pol = pol.WithSecrets(secretFiles, secretDirs)
	mode, merr := policy.ProjectModeChoice(en.Home, g.Project)
	if merr != nil {
		mode = policy.ModeReadOnly // fail closed to the narrowest mode
	}
	if en.sessionMode != "" {
		mode = en.sessionMode
	}
	return snapshotParts{mc: mc, pol: pol, reg: reg, set: registry.NewSet(reg), mode: mode, askFirst: en.askFirst()}
}

// partsComputed counts snapshotParts (tests).
var partsComputed atomic.Int64

type snapshotParts struct {
	mc       *mcpcache.Cache
	pol      *policy.Policy
	reg      []registry.Entry
	set      *registry.Set
	mode     string
	askFirst bool
}

// decide answers a tool call, failing closed when the gate cannot be
// evaluated. check=true answers for the policy tools: nothing is remembered.
func (en *Engine) decide(c guard.Call, check bool) guard.Decision {
	snap, err := en.snapshot()
	if err != nil {
		return guard.Decision{Action: guard.Block, Code: CodeGateUnavailable,
			Reason: "blocked: the MCP gate cannot be evaluated (" + err.Error() + "); run 'piagent-mcp doctor' in a terminal"}
	}
	if d, stop := en.confinement(snap, c); stop {
		return d
	}
	f := snap.Facts()
	if check {
		f.Session = nil
	}
	// Asked only by the rules that need it (git reset --hard, checkout,
	// restore, switch), once per call.
	f.DirtyProbe = sync.OnceValue(func() bool { return gitDirty(en.Cwd) })
	return snap.DecideFacts(c, f)
}

// confinement stops a call when the session's protected project files
// changed since it began, or when a bash call needs a sandbox the user
// requires and this machine cannot apply.
func (en *Engine) confinement(snap *guard.Snapshot, c guard.Call) (guard.Decision, bool) {
	w := en.integrity(snap)
	if ch := w.changed(); len(ch) > 0 {
		return guard.Decision{Action: guard.Block, Code: CodeIntegrity, Reason: w.reason(ch)}, true
	}
	if d, stop := notAFile(en.Home, en.Cwd, c); stop {
		return d, true
	}
	if c.ToolName == "powershell" {
		// Pi's PowerShell tool runs a shell piagent does not confine.
		return guard.Decision{Action: guard.Block, Code: CodeNoSandbox,
			Reason: "blocked: the powershell tool runs outside piagent's sandbox; use bash, which runs confined"}, true
	}
	if level := snap.Policy().Sandbox(); c.ToolName == "bash" && level != policy.SandboxAuto {
		if st := en.sandboxStatus(); st.Mechanism == "" {
			return guard.Decision{Action: guard.Block, Code: CodeNoSandbox,
				Reason: "blocked: your policy requires the sandbox for every command and none applies here: " + st.Missing + "; see 'piagent sandbox status', or set \"sandbox\": \"auto\" in ~/.pi/piagent-policy.json"}, true
		} else if level == policy.SandboxNamespaces && st.Namespaces == "" {
			return guard.Decision{Action: guard.Block, Code: CodeNoSandbox,
				Reason: "blocked: your policy requires the sandbox's namespaces for every command and none can be made here: " + st.NamespaceMissing + "; see 'piagent sandbox status', or set \"sandbox\": \"required\" in ~/.pi/piagent-policy.json to run under Landlock and seccomp alone"}, true
		}
	}
	return guard.Decision{}, false
}

// integrity is the session's watch of the files that decide what runs
// later, made at the first call.
func (en *Engine) integrity(snap *guard.Snapshot) *integrity {
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.watch == nil {
		en.watch = newIntegrity(en.hub, en.Home, en.Cwd, snap.Gate().View.ConfigDir, en.getenv(baseline.EnvBaseline))
	}
	return en.watch
}

// piFileTools are Pi's own tools that open the path they are given, in
// Pi's process (unconfined).
var piFileTools = map[string]bool{"read": true, "write": true, "edit": true, "grep": true, "find": true, "ls": true}

// notAFile blocks a file tool of Pi's whose path leads to a FIFO, a socket
// or a device: Pi would wait on it, with nothing to say why (a FIFO holds a
// write back until a reader comes, long enough for a command run beside it
// to change where a later write of the same message lands), or read a
// device. A missing path, a file or a folder passes to the policy.
func notAFile(home, cwd string, c guard.Call) (guard.Decision, bool) {
	if !piFileTools[c.ToolName] {
		return guard.Decision{}, false
	}
	p, _ := c.Input["path"].(string)
	if p == "" {
		return guard.Decision{}, false
	}
	abs, ok := paths.ToolPath(home, cwd, p)
	if !ok {
		return guard.Decision{}, false
	}
	fi, err := os.Stat(abs)
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return guard.Decision{}, false
	}
	kind := "a device"
	switch {
	case fi.Mode()&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case fi.Mode()&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return guard.Decision{Action: guard.Block, Code: CodeNotAFile,
		Reason: fmt.Sprintf("blocked: %s is %s, not a file: Pi's %s tool would wait on it or read a device; use bash, which runs confined", p, kind, c.ToolName)}, true
}

// Decision codes of the engine's own checks.
const (
	CodeGateUnavailable = "gate-unavailable" // the gate cannot be evaluated: every call is blocked
	CodeIntegrity       = "protected-files-changed"
	CodeNoSandbox       = "sandbox-unavailable"
	CodeNotAFile        = "not-a-file"
)

func (en *Engine) sandboxStatus() sandbox.Status {
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.probe == nil {
		probe := en.Sandbox
		if probe == nil {
			probe = sandbox.Probe
		}
		st := probe()
		en.probe = &st
	}
	return *en.probe
}

// gitDirty reports uncommitted work; when git cannot tell, or takes longer
// than dirtyTimeout, it says dirty (the destructive-command rules then err
// on the side of asking).
func gitDirty(dir string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), dirtyTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain").Output()
	return err != nil || len(bytes.TrimSpace(out)) > 0
}

// dirtyTimeout bounds the work-tree probe: a huge tree says "dirty" rather
// than hold the agent up.
const dirtyTimeout = 2 * time.Second

// ModeAnswer is the mode in effect and where it comes from.
type ModeAnswer struct {
	Mode    string   `json:"mode"` // the policy's default when nobody chose one
	Modes   []string `json:"modes"`
	Session bool     `json:"session"` // chosen for this session (/piagent-mode)
	// Source: "session", "project" (the person's choice, piagent policy
	// mode), "default" (the policy's), or "unreadable" (the mode store
	// cannot be read: readOnly).
	Source string `json:"source"`
}

// Mode shows the mode, or first sets it for this session (set != "").
func (en *Engine) Mode(set string) (ModeAnswer, error) {
	en.links.begin()
	if set != "" {
		if !slices.Contains(policy.Modes, set) {
			return ModeAnswer{}, badParams(fmt.Errorf("unknown mode %q (modes: %s)", set, strings.Join(policy.Modes, ", ")))
		}
		en.mu.Lock()
		en.sessionMode = set
		en.snap, en.snapGate = nil, nil
		en.mu.Unlock()
	}
	snap, err := en.snapshot()
	if err != nil {
		return ModeAnswer{}, gateUnavailable(err)
	}
	mode := snap.Facts().Mode
	source := "project"
	choice, cerr := policy.ProjectModeChoice(en.Home, snap.Gate().Project)
	switch {
	case en.sessionMode != "":
		source = "session"
	case cerr != nil:
		source = "unreadable"
	case choice == "":
		source = "default"
	}
	if mode == "" {
		mode = snap.Policy().Mode() // nobody chose: the policy's default
	}
	return ModeAnswer{Mode: mode, Modes: policy.Modes, Session: en.sessionMode != "", Source: source}, nil
}

// Redaction is a tool result prepared for the model: Content has the shape
// it was given in (a string, or Pi's array of parts), Removed counts what
// was taken out, Rules name why.
type Redaction struct {
	Content any      `json:"content"`
	Removed int      `json:"removed"`
	Rules   []string `json:"rules"`
}

// Redact prepares a tool result for the model. raw is a JSON string or Pi's
// array of parts; text parts are redacted, others pass unchanged.
func (en *Engine) Redact(tool string, input map[string]any, raw json.RawMessage) (Redaction, error) {
	en.links.begin()
	snap, err := en.snapshot()
	if err != nil {
		return Redaction{}, gateUnavailable(err)
	}
	if tool == "bash" {
		// The command has just ended: what it planted for later (a hook,
		// a nested repository's fsmonitor) goes to the quarantine now,
		// not at the next call, a model's answer away, while the person
		// may run git in the project.
		en.integrity(snap).changed()
	}
	pol := snap.Policy()
	call := policy.Call{ToolName: tool, Input: input}
	f := snap.Facts()
	removed, rules := 0, []string{}
	mcp := snap.MCPTool(tool)
	one := func(text string) string {
		out, rep := pol.Redact(call, text, f)
		removed += rep.Removed
		for _, fd := range rep.Secrets {
			rules = append(rules, fd.Rule)
			removed++
		}
		if mcp {
			// What a server's result hides from a person is taken out
			// before the model reads it (issue 21, item 3).
			if clean, n := catalogue.Strip(out); n > 0 {
				out = clean + fmt.Sprintf("\n[piagent removed %d hidden characters from this result]", n)
				removed += n
				rules = append(rules, "concealed-content")
			}
		}
		return out
	}
	if listsTools(tool, input) {
		if why := withheldCatalogue(snap, raw); why != "" {
			return Redaction{Content: []any{map[string]any{"type": "text", "text": why}}, Removed: 1, Rules: []string{"catalogue-changed"}}, nil
		}
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return Redaction{Content: one(str), Removed: removed, Rules: rules}, nil
	}
	var parts []map[string]any
	if err := json.Unmarshal(raw, &parts); err != nil {
		return Redaction{}, badParams(errors.New("content must be a string or an array of parts"))
	}
	for _, p := range parts {
		if t, ok := p["text"].(string); ok && p["type"] == "text" {
			p["text"] = one(t)
		}
	}
	return Redaction{Content: parts, Removed: removed, Rules: rules}, nil
}

// listsTools reports whether a call's result lists tools with their
// descriptions: the adapter proxy's describe, search and server listing,
// and Pi 1.6's tool_search (which also loads what it found).
func listsTools(tool string, input map[string]any) bool {
	switch tool {
	case "tool_search":
		return true
	case "mcp":
		return input["tool"] == nil && input["action"] == nil
	}
	return false
}

// withheldCatalogue is why a proxy search or describe result is withheld:
// it shows the model a tool whose description changed since pinned (or
// hides content), which a person has not accepted. "" when it shows none.
func withheldCatalogue(snap *guard.Snapshot, raw json.RawMessage) string {
	changed := snap.ChangedTools()
	if len(changed) == 0 {
		return ""
	}
	text := string(raw) // JSON text: names appear as written
	for _, c := range changed {
		for _, n := range c.Names {
			if containsName(text, n) {
				return fmt.Sprintf("[piagent withheld this result: it describes %s's tool %s, which changed since it was pinned and no person has accepted; review: piagent-mcp get %s, accept: piagent-mcp approve %s --tools]", c.Server, c.Tool, c.Server, c.Server)
			}
		}
	}
	return ""
}

// containsName reports whether text names the tool name as a whole word
// (not inside a longer identifier).
func containsName(text, name string) bool {
	ident := func(b byte) bool {
		return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
	}
	for from := 0; name != ""; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		if (start == 0 || !ident(text[start-1])) && (end == len(text) || !ident(text[end])) {
			return true
		}
		from = start + 1
	}
	return false
}

func glob(pattern string) ([]string, bool) {
	m, err := filepath.Glob(pattern)
	return m, err == nil
}

// treeLimit bounds what tree lists: past it, a folder is judged by every
// path it could hold.
const treeLimit = 20000

// tree lists what is below dir, without following links (a link is
// listed, and the policy resolves it), whose base names match name. dir
// itself, when it is a link to a folder, is followed: grep -r and rg
// search below a link named on their command line (a link to the home
// the repository ships), and what they read is the files there.
func tree(dir, name string, visible bool) ([]string, bool) {
	var out []string
	n := 0
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(dir); err == nil {
			if st, err := os.Stat(t); err == nil && st.IsDir() {
				dir = t
			}
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // nothing there yet
			}
			return err
		}
		if n++; n > treeLimit {
			return errTreeLimit
		}
		if p == dir {
			return nil
		}
		if visible && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if name != "" {
			if ok, _ := path.Match(name, d.Name()); !ok {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out, err == nil
}

var errTreeLimit = errors.New("too many files")

// resolve follows the symlinks of p at every level: the longest prefix that
// exists is resolved and the rest joined to it, since Pi's write creates
// missing folders beneath whatever that prefix points at. A link on the way
// whose target is missing (a dangling link, the first name past that prefix)
// is followed too: a write through it creates its target, so a link made to
// a protected file that does not exist yet (the approval store, the policy,
// a hook) is judged by that file. More links than the kernel follows (40)
// name nothing: a write there fails with ELOOP.
func resolve(p string) string {
	for range maxLinks + 1 {
		q, rest := p, ""
		for {
			r, err := filepath.EvalSymlinks(q)
			if err == nil {
				if rest == "" {
					return r
				}
				first, after, _ := strings.Cut(rest, string(filepath.Separator))
				t, err := os.Readlink(filepath.Join(r, first))
				if err != nil { // not a link: plainly missing
					return filepath.Join(r, rest)
				}
				if !filepath.IsAbs(t) {
					t = filepath.Join(r, t)
				}
				p = filepath.Join(t, after)
				break
			}
			parent := filepath.Dir(q)
			if parent == q {
				return ""
			}
			rest = filepath.Join(filepath.Base(q), rest)
			q = parent
		}
	}
	return ""
}

// maxLinks is how many symlinks the kernel follows in one path (Linux's
// MAXSYMLINKS).
const maxLinks = 40

// sandboxNotice says, once per session, where the agent's commands are not
// confined by the operating system.
func sandboxNotice(st sandbox.Status) []string {
	switch {
	case st.Mechanism == "":
		return []string{"piagent: no sandbox on this machine (" + st.Missing + "): the agent's commands are checked by the command reader alone, which a program can outrun; set \"sandbox\": \"required\" in ~/.pi/piagent-policy.json to block them instead"}
	case !st.MountNamespace:
		return []string{"piagent: the agent's commands run under Landlock and seccomp, but without namespaces (" + st.NamespaceMissing + "): piagent's files inside the project (.pi, .git/hooks, .git/config) and its secrets are not kept from them by the kernel, and a process a command detaches can outlive it; a change there blocks the session; set \"sandbox\": \"namespaces\" in ~/.pi/piagent-policy.json to block commands instead"}
	}
	return nil
}

// ServerState is one server in State.
type ServerState struct {
	Name       string   `json:"name"`
	State      string   `json:"state"`
	Reason     string   `json:"reason"`
	Fix        gate.Fix `json:"fix,omitzero"`
	Repository bool     `json:"repositoryControlled"`
	Scope      string   `json:"scope"`
	Source     string   `json:"source"`
	Kind       string   `json:"kind,omitempty"`
	// Actions are the piagent-mcp subcommands that apply to it now (gate's
	// Server.Actions): the extension's menu and completion offer these.
	Actions []string `json:"actions"`
	// Tools is the server's catalogue against its pin, when it differs or
	// hides content (issue 21): tool-level states for the extension.
	Tools *ToolsState `json:"tools,omitempty"`
}

// ToolsState is a server's catalogue against its pin.
type ToolsState struct {
	Changed   []string `json:"changed"`
	New       []string `json:"new"`
	Concealed []string `json:"concealed"`
	Fix       gate.Fix `json:"fix"`
}

// State is every server's state, the full blocks and the session notice.
type State struct {
	Project   string        `json:"project"`
	FullBlock bool          `json:"fullBlock"`
	Blocks    []gate.Block  `json:"blocks"`
	Servers   []ServerState `json:"servers"`
	// Notice is the session notice: each line's words, and its fix as
	// data when it has one (the extension words it as its slash command).
	Notice []gate.Note `json:"notice"`
	// HiddenTools are tool names the extension takes out of the model's
	// tool list: the direct and built-in names of tools whose catalogue
	// changed since pinned.
	HiddenTools []string `json:"hiddenTools"`
}

func stateOf(g *gate.Gate, quiet bool) State {
	st := State{Project: g.Project, FullBlock: g.FullBlock(), Blocks: g.Blocks, Servers: []ServerState{}, Notice: []gate.Note{}, HiddenTools: []string{}}
	if st.Blocks == nil {
		st.Blocks = []gate.Block{}
	}
	for _, s := range g.Servers {
		st.Servers = append(st.Servers, ServerState{Name: s.Name, State: s.State, Reason: s.Reason, Fix: s.Fix,
			Repository: s.Repository, Scope: s.Config.Scope, Source: s.Config.Source.File, Kind: s.Config.Source.Kind,
			Actions: s.Actions()})
	}
	if !quiet {
		st.Notice = append(st.Notice, g.Notes()...)
	}
	return st
}

// catalogues are the adapter cache's catalogue states, and what Pi's
// built-in client reported for servers the cache does not have. Called with
// en.mu held. With record false, nothing is pinned, and unpinned reports
// a catalogue a call would pin.
func (en *Engine) catalogues(g *gate.Gate, mc *mcpcache.Cache, askFirst, record bool) (_ map[string]*catalogue.State, unpinned bool) {
	out := catalogue.States(g, mc, en.belongs(g), registry.CataloguePins(en.Home), record, askFirst, time.Now())
	for name, st := range out {
		if st.FirstSight {
			en.firstSeen = append(en.firstSeen, firstSeen(name, st))
		}
		if st.Unpinned {
			return nil, true
		}
	}
	for name, st := range en.reported {
		if _, ok := out[name]; !ok {
			out[name] = st
		}
	}
	return out, false
}

// ReportAnswer says how many servers' tools were reported, and which of
// them changed since pinned.
type ReportAnswer struct {
	Servers int      `json:"servers"`
	Changed []string `json:"changed"`
}

// Report takes what the extension read from pi.getAllTools(): the tools of
// Pi's built-in MCP client, pinned at first sight and compared after.
func (en *Engine) Report(tools []catalogue.ReportedTool) (ReportAnswer, error) {
	en.links.begin()
	g, err := en.gate()
	if err != nil {
		return ReportAnswer{}, gateUnavailable(err)
	}
	names := make([]string, len(g.Servers))
	for i := range g.Servers {
		names[i] = g.Servers[i].Name
	}
	states := catalogue.StatesFromReport(g, catalogue.FromReport(tools, names, toolname.OwnersOfBuiltin), registry.CataloguePins(en.Home), en.askFirst(), time.Now())
	en.mu.Lock()
	en.reported = states
	en.snap, en.snapGate = nil, nil
	en.mu.Unlock()
	changed := []string{}
	for name, st := range states {
		if !st.Diff.Empty() || len(st.Concealed) > 0 {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return ReportAnswer{Servers: len(states), Changed: changed}, nil
}

// addTools puts each server's catalogue state into the answer, and a
// notice line for each server whose tools are blocked.
func (st *State) addTools(snap *guard.Snapshot, quiet bool) {
	for i := range st.Servers {
		srv := &st.Servers[i]
		c := snap.Catalogue(srv.Name)
		if c == nil || (c.Diff.Empty() && len(c.Concealed) == 0 && c.Err == "") {
			continue
		}
		ts := &ToolsState{Changed: c.Diff.Changed, New: c.Diff.New, Concealed: []string{}, Fix: gate.AcceptTools(srv.Name)}
		for _, f := range c.Concealed {
			ts.Concealed = append(ts.Concealed, f.String())
		}
		if ts.Changed == nil {
			ts.Changed = []string{}
		}
		if ts.New == nil {
			ts.New = []string{}
		}
		srv.Tools = ts
		if quiet {
			continue
		}
		what := c.Diff.String()
		if len(c.Concealed) > 0 {
			what = "it offers content a person cannot see (" + ts.Concealed[0] + ")"
		}
		if c.Err != "" {
			what = "its catalogue pins cannot be read (" + c.Err + ")"
		}
		st.Notice = append(st.Notice, gate.Note{Text: fmt.Sprintf("piagent: MCP server %s changed what it offers since it was pinned: %s; calls to what changed are blocked", srv.Name, what),
			Fix: gate.ReviewTools(srv.Name), Lead: "fix: "})
	}
}

// Decide answers one agent tool call, failing closed when the gate cannot
// be evaluated; the session remembers what it warned about.
func (en *Engine) Decide(c guard.Call) guard.Decision {
	en.links.begin()
	return en.decide(c, false)
}

// Check answers a tool call the model asks about (the policy tools, the
// adapter's broker, piagent policy check): the same decision, with nothing
// remembered, so asking never changes a later answer.
func (en *Engine) Check(c guard.Call) guard.Decision {
	en.links.begin()
	return en.decide(c, true)
}

// BrokerAnswer is the answer to the adapter's approval request.
type BrokerAnswer struct {
	Action string `json:"action"` // "allow" or "deny"
	Reason string `json:"reason"`
}

// Broker answers pi-mcp-adapter's tool-approval request: the adapter asks
// after it resolved a call to one server (a call from mcpScript or a UI
// iframe). It is decided as a proxy call naming that server, remembering
// nothing (the warn-once belongs to the tool call itself); a gate that
// cannot be evaluated denies.
func (en *Engine) Broker(server, tool string) BrokerAnswer {
	d := en.Check(guard.Call{ToolName: "mcp", Input: map[string]any{"server": server, "tool": cmp.Or(tool, "?")}})
	if d.Allowed() {
		return BrokerAnswer{Action: "allow"}
	}
	return BrokerAnswer{Action: "deny", Reason: d.Reason}
}

// Policy returns the effective policy for this project.
func (en *Engine) Policy() (*policy.Policy, error) {
	snap, err := en.snapshot()
	if err != nil {
		return nil, err
	}
	return snap.Policy(), nil
}

// HostAnswer says whether the Pi session asking loads pi-mcp-adapter, and so
// whether the extension must take the built-in MCP client's place.
type HostAnswer struct {
	AdapterLoads bool `json:"adapterLoads"`
	// StepAside: the extension registers /mcp so that Pi leaves its
	// built-in MCP client out (Pi ≥ 0.99 replaces it by name).
	StepAside bool   `json:"stepAside"`
	Why       string `json:"why"`
	// Trust is the project's entry in Pi's trust.json, found as Pi finds
	// it: the extension asks before it answers Pi's project_trust question.
	Trust pihost.Trust `json:"trust"`
}

// host answers from Pi's command line (argv, as Pi got it) and the agent
// dir's packages. When the packages cannot be read, the built-in is stepped
// aside: a clash of two /mcp commands is a nuisance, a built-in client
// starting unapproved servers is not.
func (en *Engine) Host(argv []string) HostAnswer {
	agentDir := paths.AgentDir(en.Home, en.Cwd, en.getenv)
	trust := pihost.ProjectTrust(agentDir, en.Cwd)
	loads, err := setup.AdapterLoads(agentDir, en.Home, argv)
	switch {
	case err != nil:
		return HostAnswer{StepAside: true, Trust: trust, Why: "Pi's packages cannot be read (" + err.Error() + "), so whether pi-mcp-adapter loads is unknown"}
	case loads:
		return HostAnswer{AdapterLoads: true, Trust: trust, Why: "pi-mcp-adapter loads and replaces Pi's built-in MCP client"}
	}
	return HostAnswer{StepAside: true, Trust: trust, Why: "pi-mcp-adapter does not load in this session"}
}

// State describes the project for the extension's status and menu: each
// server's state and the actions that apply to it, the full blocks, the
// tools to hide from the model and the session notice.
func (en *Engine) State() (State, error) {
	en.links.begin()
	g, err := en.gate()
	if err != nil {
		return State{}, gateUnavailable(err)
	}
	quiet := en.getenv("PIAGENT_NO_MCP_NOTICE") == "1"
	st := stateOf(g, quiet)
	if snap, err := en.snapshot(); err == nil {
		st.addTools(snap, quiet)
		// Direct tools whose catalogue changed leave the model's tool
		// list when the extension builds it (issue 21, item 2).
		for _, c := range snap.ChangedTools() {
			st.HiddenTools = append(st.HiddenTools, c.Names[1:]...)
		}
		sort.Strings(st.HiddenTools)
	}
	for _, l := range sandboxNotice(en.sandboxStatus()) {
		st.Notice = append(st.Notice, gate.Note{Text: l})
	}
	if !quiet {
		// issue 44: what the network proxy refused, with the fix.
		if n := netlog.Notice(sandboxexec.NetLog(en.Home), time.Now().Add(-24*time.Hour)); n != "" {
			st.Notice = append(st.Notice, gate.Note{Text: n})
		}
		// issue 42: a server the sandbox stopped is named, with the grant.
		for _, l := range StoppedNotice(en.Home, g, "piagent-mcp") {
			st.Notice = append(st.Notice, gate.Note{Text: l})
		}
	}
	// issue 6: without the launcher, name the unapproved servers the
	// adapter may start before any tool call, and the fix.
	if !quiet && en.getenv("PIAGENT_LAUNCHER") != "1" {
		_, cerr := os.Stat(registry.AdapterCache(g.View.AgentDir))
		for _, l := range gate.RiskNotice(gate.StartupRisk(g, cerr == nil)) {
			st.Notice = append(st.Notice, gate.Note{Text: l})
		}
	}
	return st, nil
}

func gateUnavailable(err error) error { return &Error{Code: CodeGateUnavailable, Message: err.Error()} }

// OfferedTool is one tool Pi would declare to the model: its name and
// where Pi says it comes from (sourceInfo.path).
type OfferedTool struct {
	Name       string `json:"name"`
	SourcePath string `json:"sourcePath,omitempty"`
}

// WithheldTool is a tool whose declaration the extension takes out of the
// model's request, and why.
type WithheldTool struct {
	Name   string    `json:"name"`
	Server string    `json:"server,omitempty"`
	Code   string    `json:"code"`
	Reason string    `json:"reason"`
	Fix    *gate.Fix `json:"fix,omitempty"`
}

// WithheldAnswer is the answer to withheld.
type WithheldAnswer struct {
	Withheld []WithheldTool `json:"withheld"`
	// FirstSight are the catalogues pinned at first sight since the last
	// answer: the extension shows them to the person before the request
	// goes out (issue 39, item 4).
	FirstSight []FirstSeen `json:"firstSight,omitempty"`
}

// FirstSeen is a catalogue pinned at first sight: the server, and each tool
// with its description, hidden characters made visible.
type FirstSeen struct {
	Server string   `json:"server"`
	Tools  []string `json:"tools"`
}

func firstSeen(name string, st *catalogue.State) FirstSeen {
	f := FirstSeen{Server: name, Tools: []string{}}
	for _, t := range st.Seen.Names() {
		f.Tools = append(f.Tools, catalogue.Visible(t)+": "+catalogue.Visible(st.Seen.Descriptions[t]))
	}
	return f
}

// Withheld answers, for the tools Pi would declare to the model, which of
// them the model must not be shown: a server's tool whose call the gate
// stops (guard.Snapshot.Withholds). A gate that cannot be evaluated is an
// error: the extension then blocks the request.
func (en *Engine) Withheld(tools []OfferedTool) (WithheldAnswer, error) {
	en.links.begin()
	snap, err := en.snapshot()
	if err != nil {
		return WithheldAnswer{}, gateUnavailable(err)
	}
	out := WithheldAnswer{Withheld: []WithheldTool{}}
	for _, t := range tools {
		if d, ok := snap.Withholds(t.Name, t.SourcePath); ok {
			out.Withheld = append(out.Withheld, WithheldTool{Name: t.Name, Server: d.Server, Code: d.Code, Reason: d.Reason, Fix: d.Fix})
		}
	}
	en.mu.Lock()
	out.FirstSight, en.firstSeen = en.firstSeen, nil
	en.mu.Unlock()
	return out, nil
}
