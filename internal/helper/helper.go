// Package helper is the Go side of the Pi extension: a long-running process
// speaking the versioned, newline-delimited JSON protocol documented in
// docs/helper-protocol.md. It keeps the gate cached, re-validates its
// signature on every request and answers with guard decisions.
package helper

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/setup"
	"github.com/piagent/piagent/internal/toolname"
)

// Protocol and Version name what the helper speaks.
const (
	Protocol = "piagent-guard"
	Version  = 1
)

// maxLine bounds one request; a tool input larger than this is refused.
const maxLine = 32 << 20

// Server answers requests for one project.
type Server struct {
	Home, Cwd string
	Getenv    func(string) string
	Build     string // piagent's version, for the handshake
	// Binaries are piagent's own executables: registered, so no call may
	// replace them.
	Binaries []string
	// Protected extends the guard's list of files no call may write.
	Protected []string

	mu          sync.Mutex
	cache       gate.Cache
	links       linkCache // where paths lead, between changes
	snap        *guard.Snapshot
	snapGate    *gate.Gate
	session     *policy.SessionState
	sessionMode string // set by /piagent-mode for this session only
	watch       *integrity
	probe       *sandbox.Status
	optsOnce    sync.Once
	opts        gate.Options
	// reported are the catalogues Pi's built-in MCP client registered, as
	// the extension reported them, against their pins (method report).
	reported map[string]*catalogue.State
}

// Hello is the handshake line.
type Hello struct {
	Protocol string `json:"protocol"`
	Version  int    `json:"version"`
	Piagent  string `json:"piagent"`
	PID      int    `json:"pid"`
	// Bin is the helper's own executable, absolute: the extension runs it
	// for every later helper and for `piagent sandbox exec`, and never looks
	// piagent up on PATH again.
	Bin string `json:"bin,omitempty"`
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is an in-band error.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrFraming ends Serve: a line that is not a JSON object.
var ErrFraming = errors.New("broken framing")

func (s *Server) bin() string {
	if len(s.Binaries) > 0 {
		return s.Binaries[0]
	}
	return ""
}

func (s *Server) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// Serve writes the handshake, then answers one request per line until in
// ends (nil) or a line is not a JSON object (ErrFraming).
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Hello{Protocol: Protocol, Version: Version, Piagent: s.Build, PID: os.Getpid(), Bin: s.bin()}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			if jerr := json.Unmarshal(line, &req); jerr != nil || req.Method == "" && req.ID == nil {
				msg := "a request must be one JSON object per line"
				if jerr != nil {
					msg += ": " + jerr.Error()
				}
				_ = enc.Encode(response{ID: json.RawMessage("null"), Error: &Error{Code: "framing", Message: msg}})
				_ = w.Flush()
				return ErrFraming
			}
			resp := s.handle(req)
			if req.ID == nil {
				resp.ID = json.RawMessage("null")
			}
			if err := enc.Encode(resp); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			_ = enc.Encode(response{ID: json.RawMessage("null"), Error: &Error{Code: "framing", Message: err.Error()}})
			_ = w.Flush()
			return ErrFraming
		}
	}
}

var errTooLong = fmt.Errorf("request line longer than %d bytes", maxLine)

// readLine reads up to LF only.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, errTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

func (s *Server) handle(req request) response {
	s.links.begin() // what the last request learnt of where paths lead is rechecked, once
	resp := response{ID: req.ID}
	result, err := s.dispatch(req.Method, req.Params)
	if err != nil {
		var he *Error
		if !errors.As(err, &he) {
			he = &Error{Code: "internal", Message: err.Error()}
		}
		resp.Error = he
		return resp
	}
	resp.Result = result
	return resp
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badParams(err error) error { return &Error{Code: "bad-params", Message: err.Error()} }

func (s *Server) dispatch(method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return map[string]bool{"ok": true}, nil
	case "decide":
		var c guard.Call
		if err := decodeParams(params, &c); err != nil {
			return nil, badParams(err)
		}
		if c.ToolName == "" {
			return nil, badParams(errors.New("toolName is required"))
		}
		return s.decide(c, false), nil
	case "check":
		// The policy tools: the same engine, for a call the model asks
		// about; nothing is remembered (no warn-once).
		var c guard.Call
		if err := decodeParams(params, &c); err != nil {
			return nil, badParams(err)
		}
		if c.ToolName == "" {
			return nil, badParams(errors.New("toolName is required"))
		}
		return s.decide(c, true), nil
	case "mode":
		var p struct {
			Set string `json:"set"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return s.mode(p.Set)
	case "broker":
		var p struct {
			ServerName       string `json:"serverName"`
			OriginalToolName string `json:"originalToolName"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		if p.ServerName == "" {
			return nil, badParams(errors.New("serverName is required"))
		}
		// The adapter asks after it resolved a call to one server (a call
		// from mcpScript or a UI iframe): decide it as a proxy call naming
		// that server, remembering nothing (the warn-once belongs to the
		// tool call itself). A gate that cannot be evaluated denies.
		tool := p.OriginalToolName
		if tool == "" {
			tool = "?"
		}
		d := s.decide(guard.Call{ToolName: "mcp", Input: map[string]any{"server": p.ServerName, "tool": tool}}, true)
		if d.Allowed() {
			return map[string]string{"action": "allow", "reason": ""}, nil
		}
		return map[string]string{"action": "deny", "reason": d.Reason}, nil
	case "redact":
		var p struct {
			ToolName string          `json:"toolName"`
			Input    map[string]any  `json:"input"`
			Content  json.RawMessage `json:"content"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return s.redact(p.ToolName, p.Input, p.Content)
	case "host":
		var p struct {
			Argv []string `json:"argv"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return s.host(p.Argv), nil
	case "report":
		var p struct {
			Tools []catalogue.ReportedTool `json:"tools"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, badParams(err)
		}
		return s.report(p.Tools)
	case "state":
		g, err := s.gate()
		if err != nil {
			return nil, &Error{Code: "gate-unavailable", Message: err.Error()}
		}
		st := stateOf(g, s.getenv("PIAGENT_NO_MCP_NOTICE") == "1")
		if snap, err := s.snapshot(); err == nil {
			st.addTools(snap, s.getenv("PIAGENT_NO_MCP_NOTICE") == "1")
			// Direct tools whose catalogue changed leave the model's tool
			// list when the extension builds it (issue 21, item 2).
			for _, c := range snap.ChangedTools() {
				st.HiddenTools = append(st.HiddenTools, c.Names[1:]...)
			}
			sort.Strings(st.HiddenTools)
		}
		st.Notice = append(st.Notice, sandboxNotice(s.sandboxStatus())...)
		// issue 6: without the launcher, name the unapproved servers the
		// adapter may start before any tool call, and the fix.
		if s.getenv("PIAGENT_NO_MCP_NOTICE") != "1" && s.getenv("PIAGENT_LAUNCHER") != "1" {
			_, cerr := os.Stat(registry.AdapterCache(g.View.AgentDir))
			st.Notice = append(st.Notice, gate.RiskNotice(gate.StartupRisk(g, cerr == nil))...)
		}
		return st, nil
	}
	return nil, &Error{Code: "unknown-method", Message: fmt.Sprintf("unknown method %q", method)}
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	return json.Unmarshal(raw, v)
}

// options are the gate's inputs: fixed for the server's life, so built once.
func (s *Server) options() gate.Options {
	s.optsOnce.Do(func() {
		getenv := gate.RealEnv(s.Getenv)
		agentDir := paths.AgentDir(s.Home, s.Cwd, getenv)
		s.opts = gate.Options{Home: s.Home, Cwd: s.Cwd, Getenv: getenv,
			Extra: registry.Watched(registry.List(registry.Input{Home: s.Home, AgentDir: agentDir, Project: s.Cwd}))}
	})
	return s.opts
}

func (s *Server) gate() (*gate.Gate, error) {
	return s.cache.Get(s.options())
}

// snapshot returns the guard snapshot for the current gate, rebuilding it
// only when the gate was recomputed.
func (s *Server) snapshot() (*guard.Snapshot, error) {
	g, err := s.gate()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g == s.snapGate && s.snap != nil {
		return s.snap, nil
	}
	agentDir := g.View.AgentDir
	mc, err := mcpcache.Load(registry.AdapterCache(agentDir))
	if err != nil {
		mc = nil // the adapter sees no cache either; reverse naming is then by prefix only
	}
	// A policy file that cannot be read yields a policy that blocks every
	// call with the file and position: never a silently weaker policy.
	pol, _ := policy.Load(s.Home, s.Cwd)
	// The registry's secrets (Pi's auth.json and the adapter's tokens
	// wherever the agent dir is, the approval store) are protected paths
	// whatever the policy files say.
	var secretFiles, secretDirs []string
	reg := g.Registry(s.Binaries, s.Protected)
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
	if s.session == nil {
		s.session = policy.NewSessionState()
	}
	mode, merr := policy.ProjectModeChoice(s.Home, g.Project)
	if merr != nil {
		mode = policy.ModeReadOnly // fail closed to the narrowest mode
	}
	if s.sessionMode != "" {
		mode = s.sessionMode
	}
	s.snap = guard.NewSnapshot(g, guard.Options{
		Cache:       mc,
		AdapterPath: s.getenv("PIAGENT_ADAPTER_PATH"),
		Protected:   s.Protected,
		Binaries:    s.Binaries,
		Registry:    reg,
		Resolve:     s.links.resolve,
		Policy:      pol,
		Facts: policy.Facts{Home: s.Home, Cwd: s.Cwd, ProjectRoot: s.Cwd, RealPath: s.links.realPath, Glob: glob, Tree: tree,
			Mode: mode, Session: s.session},
		// What each usable server offered the model, against its pin; a
		// first sight is pinned here.
		Catalogues: s.catalogues(g, mc),
	})
	s.snapGate = g
	return s.snap, nil
}

// decide answers a tool call, failing closed when the gate cannot be
// evaluated. check=true answers for the policy tools: nothing is remembered.
func (s *Server) decide(c guard.Call, check bool) guard.Decision {
	snap, err := s.snapshot()
	if err != nil {
		return guard.Decision{Action: guard.Block, Code: "gate-unavailable",
			Reason: "piagent: blocked: the MCP gate cannot be evaluated (" + err.Error() + "); run 'piagent-mcp doctor' in a terminal"}
	}
	if d, stop := s.confinement(snap, c); stop {
		return d
	}
	f := snap.Facts()
	if check {
		f.Session = nil
	}
	// Asked only by the rules that need it (git reset --hard, checkout,
	// restore, switch), once per call.
	f.DirtyProbe = sync.OnceValue(func() bool { return gitDirty(s.Cwd) })
	return snap.DecideFacts(c, f)
}

// confinement stops a call when the session's protected project files
// changed since it began, or when a bash call needs a sandbox the user
// requires and this machine cannot apply.
func (s *Server) confinement(snap *guard.Snapshot, c guard.Call) (guard.Decision, bool) {
	s.mu.Lock()
	if s.watch == nil {
		s.watch = newIntegrity(s.Cwd, snap.Gate().View.ConfigDir)
	}
	w := s.watch
	s.mu.Unlock()
	if ch := w.changed(); len(ch) > 0 {
		return guard.Decision{Action: guard.Block, Code: CodeIntegrity,
			Reason: fmt.Sprintf("piagent: blocked: %s changed during this session; files there decide what Pi loads or what git runs, and an agent's command may have written them; look at the change yourself (git status, ls -la), undo what you did not make, then start a new session", strings.Join(ch, ", "))}, true
	}
	if c.ToolName == "powershell" {
		// Pi's PowerShell tool runs a shell piagent does not confine.
		return guard.Decision{Action: guard.Block, Code: CodeNoSandbox,
			Reason: "piagent: blocked: the powershell tool runs outside piagent's sandbox; use bash, which runs confined"}, true
	}
	if c.ToolName == "bash" && snap.Policy().Sandbox() == policy.SandboxRequired {
		if st := s.sandboxStatus(); st.Mechanism == "" {
			return guard.Decision{Action: guard.Block, Code: CodeNoSandbox,
				Reason: "piagent: blocked: your policy requires the sandbox for every command and none applies here: " + st.Missing + "; see 'piagent sandbox status', or set \"sandbox\": \"auto\" in ~/.pi/piagent-policy.json"}, true
		}
	}
	return guard.Decision{}, false
}

// Decision codes of the helper's own checks.
const (
	CodeIntegrity = "protected-files-changed"
	CodeNoSandbox = "sandbox-unavailable"
)

func (s *Server) sandboxStatus() sandbox.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.probe == nil {
		st := sandbox.Probe()
		s.probe = &st
	}
	return *s.probe
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

// mode shows or sets this session's mode.
func (s *Server) mode(set string) (any, error) {
	if set != "" {
		if !slices.Contains(policy.Modes, set) {
			return nil, badParams(fmt.Errorf("unknown mode %q (modes: %s)", set, strings.Join(policy.Modes, ", ")))
		}
		s.mu.Lock()
		s.sessionMode = set
		s.snap, s.snapGate = nil, nil
		s.mu.Unlock()
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, &Error{Code: "gate-unavailable", Message: err.Error()}
	}
	mode := snap.Facts().Mode
	// source says where the mode comes from: "session" (/piagent-mode),
	// "project" (the person's choice, piagent policy mode), "default" (the
	// policy's), or "unreadable" (the mode store cannot be read: readOnly).
	source := "project"
	choice, cerr := policy.ProjectModeChoice(s.Home, snap.Gate().Project)
	switch {
	case s.sessionMode != "":
		source = "session"
	case cerr != nil:
		source = "unreadable"
	case choice == "":
		source = "default"
	}
	if mode == "" {
		mode = snap.Policy().Mode() // nobody chose: the policy's default
	}
	return map[string]any{"mode": mode, "modes": policy.Modes, "session": s.sessionMode != "", "source": source}, nil
}

// redact prepares a tool result for the model. content is a string or Pi's
// array of parts; text parts are redacted, others pass unchanged.
func (s *Server) redact(tool string, input map[string]any, raw json.RawMessage) (any, error) {
	snap, err := s.snapshot()
	if err != nil {
		return nil, &Error{Code: "gate-unavailable", Message: err.Error()}
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
	if tool == "mcp" && (input["search"] != nil || input["describe"] != nil) {
		if why := withheldCatalogue(snap, raw); why != "" {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": why}}, "removed": 1, "rules": []string{"catalogue-changed"}}, nil
		}
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return map[string]any{"content": one(str), "removed": removed, "rules": rules}, nil
	}
	var parts []map[string]any
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, badParams(errors.New("content must be a string or an array of parts"))
	}
	for _, p := range parts {
		if t, ok := p["text"].(string); ok && p["type"] == "text" {
			p["text"] = one(t)
		}
	}
	return map[string]any{"content": parts, "removed": removed, "rules": rules}, nil
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
// listed, and the policy resolves it), whose base names match name.
func tree(dir, name string, visible bool) ([]string, bool) {
	var out []string
	n := 0
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
// missing folders beneath whatever that prefix points at.
func resolve(p string) string {
	rest := ""
	for q := p; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return ""
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}

// sandboxNotice says, once per session, where the agent's commands are not
// confined by the operating system.
func sandboxNotice(st sandbox.Status) []string {
	switch {
	case st.Mechanism == "":
		return []string{"piagent: no sandbox on this machine (" + st.Missing + "): the agent's commands are checked by the command reader alone, which a program can outrun; set \"sandbox\": \"required\" in ~/.pi/piagent-policy.json to block them instead"}
	case !st.MountNamespace:
		return []string{"piagent: the agent's commands run under Landlock, but without a private mount namespace: piagent's files inside the project (.pi, .git/hooks, .git/config) and its secrets are not kept from them by the kernel; a change there blocks the session"}
	}
	return nil
}

type serverState struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Reason     string `json:"reason"`
	Fix        string `json:"fix,omitempty"`
	Repository bool   `json:"repositoryControlled"`
	Scope      string `json:"scope"`
	Source     string `json:"source"`
	Kind       string `json:"kind,omitempty"`
	// Actions are the piagent-mcp subcommands that apply to it now (gate's
	// Server.Actions): the extension's menu and completion offer these.
	Actions []string `json:"actions"`
	// Tools is the server's catalogue against its pin, when it differs or
	// hides content (issue 21): tool-level states for the extension.
	Tools *toolsState `json:"tools,omitempty"`
}

type toolsState struct {
	Changed   []string `json:"changed"`
	New       []string `json:"new"`
	Concealed []string `json:"concealed"`
	Fix       string   `json:"fix"`
}

type state struct {
	Project   string        `json:"project"`
	FullBlock bool          `json:"fullBlock"`
	Blocks    []gate.Block  `json:"blocks"`
	Servers   []serverState `json:"servers"`
	Notice    []string      `json:"notice"`
	// HiddenTools are tool names the extension takes out of the model's
	// tool list: the direct and built-in names of tools whose catalogue
	// changed since pinned.
	HiddenTools []string `json:"hiddenTools"`
}

func stateOf(g *gate.Gate, quiet bool) state {
	st := state{Project: g.Project, FullBlock: g.FullBlock(), Blocks: g.Blocks, Servers: []serverState{}, Notice: []string{}, HiddenTools: []string{}}
	if st.Blocks == nil {
		st.Blocks = []gate.Block{}
	}
	for _, s := range g.Servers {
		st.Servers = append(st.Servers, serverState{Name: s.Name, State: s.State, Reason: s.Reason, Fix: s.Fix,
			Repository: s.Repository, Scope: s.Config.Scope, Source: s.Config.Source.File, Kind: s.Config.Source.Kind,
			Actions: s.Actions()})
	}
	if !quiet {
		st.Notice = append(st.Notice, g.Notice()...)
	}
	return st
}

// catalogues are the adapter cache's catalogue states, and what Pi's
// built-in client reported for servers the cache does not have. Called with
// s.mu held.
func (s *Server) catalogues(g *gate.Gate, mc *mcpcache.Cache) map[string]*catalogue.State {
	out := catalogue.States(g, mc, registry.CataloguePins(s.Home), true, time.Now())
	for name, st := range s.reported {
		if _, ok := out[name]; !ok {
			out[name] = st
		}
	}
	return out
}

// report takes what the extension read from pi.getAllTools(): the tools of
// Pi's built-in MCP client, pinned at first sight and compared after.
func (s *Server) report(tools []catalogue.ReportedTool) (any, error) {
	g, err := s.gate()
	if err != nil {
		return nil, &Error{Code: "gate-unavailable", Message: err.Error()}
	}
	names := make([]string, len(g.Servers))
	for i := range g.Servers {
		names[i] = g.Servers[i].Name
	}
	states := catalogue.StatesFromReport(g, catalogue.FromReport(tools, names, toolname.OwnersOfBuiltin), registry.CataloguePins(s.Home), time.Now())
	s.mu.Lock()
	s.reported = states
	s.snap, s.snapGate = nil, nil
	s.mu.Unlock()
	changed := []string{}
	for name, st := range states {
		if !st.Diff.Empty() || len(st.Concealed) > 0 {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return map[string]any{"servers": len(states), "changed": changed}, nil
}

// addTools puts each server's catalogue state into the answer, and a
// notice line for each server whose tools are blocked.
func (st *state) addTools(snap *guard.Snapshot, quiet bool) {
	for i := range st.Servers {
		srv := &st.Servers[i]
		c := snap.Catalogue(srv.Name)
		if c == nil || (c.Diff.Empty() && len(c.Concealed) == 0 && c.Err == "") {
			continue
		}
		ts := &toolsState{Changed: c.Diff.Changed, New: c.Diff.New, Concealed: []string{}, Fix: "piagent-mcp approve " + srv.Name + " --tools"}
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
		st.Notice = append(st.Notice, fmt.Sprintf("piagent: MCP server %s changed what it offers since it was pinned: %s; calls to what changed are blocked; review: piagent-mcp get %s, accept: %s", srv.Name, what, srv.Name, ts.Fix))
	}
}

// Decide answers one tool call outside the protocol (piagent policy check):
// the same engine the extension asks.
func (s *Server) Decide(c guard.Call) guard.Decision {
	s.links.begin()
	return s.decide(c, true)
}

// Redact redacts content (a JSON string or array of parts) outside the
// protocol (piagent policy redact).
func (s *Server) Redact(tool string, input map[string]any, content json.RawMessage) (map[string]any, error) {
	s.links.begin()
	v, err := s.redact(tool, input, content)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// PolicySnapshot returns the effective policy for this project.
func (s *Server) PolicySnapshot() (*policy.Policy, error) {
	snap, err := s.snapshot()
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
	Trust setup.Trust `json:"trust"`
}

// host answers from Pi's command line (argv, as Pi got it) and the agent
// dir's packages. When the packages cannot be read, the built-in is stepped
// aside: a clash of two /mcp commands is a nuisance, a built-in client
// starting unapproved servers is not.
func (s *Server) host(argv []string) HostAnswer {
	agentDir := paths.AgentDir(s.Home, s.Cwd, s.getenv)
	trust := setup.ProjectTrust(agentDir, s.Cwd)
	loads, err := setup.AdapterLoads(agentDir, s.Home, argv)
	switch {
	case err != nil:
		return HostAnswer{StepAside: true, Trust: trust, Why: "Pi's packages cannot be read (" + err.Error() + "), so whether pi-mcp-adapter loads is unknown"}
	case loads:
		return HostAnswer{AdapterLoads: true, Trust: trust, Why: "pi-mcp-adapter loads and replaces Pi's built-in MCP client"}
	}
	return HostAnswer{StepAside: true, Trust: trust, Why: "pi-mcp-adapter does not load in this session"}
}
