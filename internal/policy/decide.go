package policy

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/secret"
)

// Call is one tool call as Pi's tool_call event carries it.
type Call struct {
	ToolName string         `json:"toolName"`
	Input    map[string]any `json:"input"`
}

// Facts is what Decide knows about the world. The caller gathers it; Decide
// reads no file, no environment and no clock.
//
// RealPath keeps Decide pure while following symlinks: the caller passes a
// function that answers for one absolute path with its symlink-resolved
// target and whether it resolved: it exists, or a dangling link on its way
// says where a write would create it (the guard passes one built on
// filepath.EvalSymlinks; tests pass a map). Decide asks it for each
// candidate path, and for a path that does not exist yet, for its nearest
// ancestor, so that a new file under a symlinked folder is judged by where it
// would really land. A nil RealPath means no symlinks are followed.
type Facts struct {
	Home        string
	Cwd         string
	ProjectRoot string
	RealPath    func(string) (string, bool)
	// Glob expands a shell glob (path.Match syntax, absolute) the way the
	// shell will, for judging a command such as `cat *.go` by the files it
	// names: the guard passes filepath.Glob. ok false, or a nil Glob, makes
	// Decide judge the glob by every path it could match instead, which
	// blocks more (`cat *` can reach auth.json).
	Glob func(pattern string) (matches []string, ok bool)
	// Tree lists the files and folders below an absolute folder whose base
	// names match name (path.Match; "" for any), the way find would: for
	// judging `grep -r x src` or `find . -name '*.txt' -exec cat {} \;` by
	// what is there. ok false (too many, unreadable), or a nil Tree, judges
	// by every path the folder could hold instead.
	// visible leaves out hidden files and folders, as rg does.
	Tree  func(dir, name string, visible bool) (paths []string, ok bool)
	Dirty bool // the project has uncommitted work (git reset --hard, git clean)
	// DirtyProbe, when set, is asked instead of Dirty by the rules that
	// need it, so a command that is not one of them costs no probe.
	DirtyProbe func() bool
	Mode       string // the person's chosen mode; "" uses the policy's
	Session    *SessionState
	// HardLinks is how many names the existing file at an absolute path
	// has (links followed), 0 when it is missing or unknown: a second name
	// made in the project for ~/.bashrc is ~/.bashrc, and no symlink shows
	// it. A nil HardLinks knows none.
	HardLinks func(string) int
}

// SessionState is what a session remembers between calls: which
// unregistered tools were already warned about. The zero value is ready; a
// nil *SessionState remembers nothing (every call warns). Safe for
// concurrent use.
type SessionState struct {
	mu     sync.Mutex
	warned map[string]bool
}

// NewSessionState starts a session.
func NewSessionState() *SessionState { return &SessionState{} }

// firstWarning records a warning for tool and reports whether it is the first.
func (s *SessionState) firstWarning(tool string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warned[tool] {
		return false
	}
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[tool] = true
	return true
}

// Decision is the answer for one call.
type Decision struct {
	Action  string `json:"action"`            // allow, block, confirm or warn
	Code    string `json:"code"`              // a stable reason code
	Rule    string `json:"rule,omitempty"`    // the pattern or rule that fired
	Subject string `json:"subject,omitempty"` // the path or command that triggered it, never a secret value
	Reason  string `json:"reason,omitempty"`  // for the person
}

// Reason codes.
const (
	CodeAllowed             = "allowed"
	CodePolicyInvalid       = "policy-invalid"
	CodeModeUnknown         = "mode-unknown"
	CodeUnregistered        = "tool-unregistered"
	CodeInputTooDeep        = "input-too-deep"
	CodeProtectedPath       = "protected-path"
	CodeSearchProtected     = "search-protected"
	CodeShellNoCommand      = "shell-no-command"
	CodeShellParse          = "shell-parse-error"
	CodeShellRule           = "shell-rule"
	CodeExecRule            = "exec-rule"
	CodeShellProtectedRead  = "shell-protected-read"
	CodeShellProtectedWrite = "shell-protected-write"
	CodeShellDynamicPath    = "shell-dynamic-path"
	CodeModeDenied          = "mode-denied"
	CodeShipConfirm         = "ship-confirm"
)

// ReadOnlyTool reports Pi's tools whose calls only read: the gate's
// self-protection lets them be, and allowReadPaths lifts the protection
// for them.
func ReadOnlyTool(name string) bool {
	switch name {
	case "read", "grep", "find", "ls":
		return true
	}
	return false
}

// DecideInspection answers whether an inspected call may run, in this
// order: a policy that failed to load blocks; the tool registry (advisory
// warns once per tool per session, enforce blocks unregistered tools,
// trusted-full-access lifts enforcement); protected paths in the input
// (whatever the registry mode); the search channels grep.glob and
// find.pattern; shell analysis for bash and for command fields; the mode. A
// ship action needs confirmation, and so does a shell rule that asks for
// it. It does no IO; see Facts. The layer before it, Self, reads the same
// inspection.
func (p *Policy) DecideInspection(in *Inspection, f Facts) Decision {
	d := p.decide(in, &f)
	if d.Action != ActionAllow {
		d.Subject = scrub(d.Subject)
		d.Reason = scrub(d.Reason)
	}
	return d
}

// scrub replaces anything secret-looking in text meant for the person.
func scrub(s string) string {
	if s == "" {
		return s
	}
	out, _ := secret.Redact(s)
	return out
}

func (p *Policy) decide(insp *Inspection, f *Facts) Decision {
	call := insp.Call
	if p == nil || p.err != nil || p.allowedTools == nil {
		err := p.Err()
		if err == nil {
			err = fmt.Errorf("policy not initialised")
		}
		return Decision{Action: ActionBlock, Code: CodePolicyInvalid, Subject: call.ToolName,
			Reason: fmt.Sprintf("piagent blocks every tool call while the tool policy cannot be loaded: %v; fix or remove the file", err)}
	}
	if rp := f.RealPath; rp != nil {
		// One call asks about the same folders many times; ask once.
		memo := map[string]struct {
			t  string
			ok bool
		}{}
		f.RealPath = func(s string) (string, bool) {
			if r, hit := memo[s]; hit {
				return r.t, r.ok
			}
			t, ok := rp(s)
			memo[s] = struct {
				t  string
				ok bool
			}{t, ok}
			return t, ok
		}
	}
	mode, capped := p.effectiveMode(f)
	if modeRank(mode) < 0 {
		return Decision{Action: ActionBlock, Code: CodeModeUnknown, Subject: mode,
			Reason: fmt.Sprintf("mode %q is not one of %s; choose one with /piagent-mode <mode> or piagent policy mode <mode>", mode, strings.Join(Modes, ", "))}
	}

	// 1. The registry.
	var warn *Decision
	if !p.registered(call.ToolName) {
		if p.registryMode == RegistryEnforce && p.profile != ProfileTrustedFullAccess {
			return p.unregisteredBlock(call.ToolName)
		}
		if call.ToolName != "mcp" || p.registryMode == RegistryEnforce {
			// The adapter's own proxy tool is not warned about in
			// advisory: the MCP gate judges every call through it, and a
			// warning in every session that uses MCP teaches people to
			// skip warnings.
			warn = &Decision{Action: ActionWarn, Code: CodeUnregistered, Subject: call.ToolName,
				Reason: fmt.Sprintf("tool %q has no registered capabilities; it runs because the tool registry is %s (piagent warns once per tool per session); register it under toolCapabilities in ~/.pi/piagent-policy.json", call.ToolName, p.registryModeLabel())}
		}
	}

	// 2. Protected paths, whatever the registry mode.
	x := insp.extraction()
	if x.tooDeep != "" {
		return Decision{Action: ActionBlock, Code: CodeInputTooDeep, Subject: x.tooDeep,
			Reason: fmt.Sprintf("tool input is nested deeper than %d levels at %s; piagent cannot inspect it, so the call is blocked", MaxInspectionDepth, x.tooDeep)}
	}
	hs := homeSegs(f.Home)
	exemptRead := ReadOnlyTool(call.ToolName)
	for _, c := range x.cands {
		if c.kind == candContent {
			continue
		}
		vs := variants(c.value, call.ToolName)
		if piTool(call.ToolName) && call.ToolName != "bash" {
			// the path Pi's file tools open (resolveToCwd): "@" dropped
			// before a file: URL is read, tabs and newlines dropped from it
			if abs, ok := paths.ToolPath(f.Home, f.Cwd, c.value); ok {
				vs = append(vs, abs)
			}
		}
		for _, v := range vs {
			if pat, ok := p.protectedHit(v, f, hs, exemptRead, false); ok {
				reason := fmt.Sprintf("%s.%s names %q, a protected path (rule %q); piagent keeps credentials and its own state away from tools", call.ToolName, c.field, v, pat)
				if p.readableOnly(v, f, hs) {
					reason = fmt.Sprintf("%s.%s names %q, a path tools may read but not write (rule %q); piagent keeps what runs later, unconfined (a shell's, git's or an editor's start-up file, a program on PATH), and the examples of secrets' files as they are", call.ToolName, c.field, v, pat)
				}
				return Decision{Action: ActionBlock, Code: CodeProtectedPath, Rule: pat, Subject: v, Reason: reason}
			}
		}
	}

	if !exemptRead && f.HardLinks != nil {
		for _, c := range x.cands {
			if c.kind != candPath {
				continue
			}
			if d, ok := p.hardLinkBlock(call.ToolName+"."+c.field, c.value, f, piTool(call.ToolName)); ok {
				return d
			}
		}
	}

	// 3. Search channels.
	for _, s := range x.search {
		if d, ok := p.searchBlock(call, s, f, hs); ok {
			return d
		}
	}

	// 4. Shell analysis.
	var in intent
	var confirms []Decision
	ships := false
	isBash := call.ToolName == "bash"
	if isBash {
		cmd, ok := call.Input["command"].(string)
		if !ok {
			return Decision{Action: ActionBlock, Code: CodeShellNoCommand, Subject: "bash",
				Reason: "bash call without a command string; piagent cannot analyse it"}
		}
		r := p.analyseShell(cmd, "command", f, hs)
		if r.block != nil {
			return *r.block
		}
		in, confirms = r.intent, r.confirms
	} else {
		for _, c := range x.commands {
			r := p.analyseShell(c.value, c.field, f, hs)
			if r.block != nil {
				return *r.block
			}
			confirms = append(confirms, r.confirms...)
			ships = ships || r.ships
		}
		in = p.toolIntent(call, f, func() []string { return p.writeTargets(call, f) })
		switch {
		case ships:
			in = max(in, intentShip)
		case len(confirms) > 0:
			in = max(in, intentSource)
		}
	}

	// 5. The mode.
	if int(in) > modeRank(mode) {
		how := "switch with /piagent-mode <mode> or piagent policy mode <mode>"
		if capped {
			how = fmt.Sprintf("the project policy %s caps the mode at %s", p.files[LayerProject], mode)
		}
		subj := call.ToolName
		if isBash {
			subj = shellSubject(call)
		}
		return Decision{Action: ActionBlock, Code: CodeModeDenied, Rule: mode, Subject: subj,
			Reason: fmt.Sprintf("mode %s does not allow %s (%s needs mode %s or higher); %s", mode, in, call.ToolName, minModeFor(in), how)}
	}
	if in == intentShip {
		if len(confirms) > 0 {
			c := confirms[0]
			c.Action = ActionConfirm
			return c
		}
		return Decision{Action: ActionConfirm, Code: CodeShipConfirm, Subject: call.ToolName,
			Reason: fmt.Sprintf("%s ships or spends; a person must confirm it", call.ToolName)}
	}
	if len(confirms) > 0 {
		return confirms[0]
	}
	if warn != nil {
		if f.Session.firstWarning(call.ToolName) {
			return *warn
		}
	}
	return Decision{Action: ActionAllow, Code: CodeAllowed}
}

func shellSubject(call Call) string {
	s, _ := call.Input["command"].(string)
	return s
}

func (p *Policy) registryModeLabel() string {
	if p.registryMode == RegistryEnforce {
		return "enforce with the trusted-full-access profile"
	}
	return RegistryAdvisory
}

// registered reports whether a tool is in the registry. A name starting with
// piagent_ counts only when it is one of this build's own tools.
func (p *Policy) registered(name string) bool {
	if strings.HasPrefix(name, "piagent_") && !p.builtinTools[name] {
		return false
	}
	if _, ok := p.allowedTools[name]; ok {
		return true
	}
	_, ok := p.capabilities[name]
	return ok
}

func (p *Policy) unregisteredBlock(name string) Decision {
	d := Decision{Action: ActionBlock, Code: CodeUnregistered, Subject: name}
	switch {
	case name == "mcp" || strings.HasPrefix(name, "mcp__"):
		d.Reason = fmt.Sprintf("the tool registry is enforce and the MCP proxy tool %q is not registered, so MCP is blocked; declaring mcpCapabilities does not change that (no capability maps to an MCP server); only the trusted-full-access permission profile in ~/.pi/piagent-policy.json lets MCP run under enforce", name)
	case strings.HasPrefix(name, "piagent_"):
		d.Reason = fmt.Sprintf("the tool registry is enforce and %q is not one of piagent's own tools; a piagent_ name gives no privilege", name)
	default:
		d.Reason = fmt.Sprintf("the tool registry is enforce and tool %q is not registered; add it under toolCapabilities in ~/.pi/piagent-policy.json", name)
	}
	return d
}

// writeTargets are the absolute paths a write or edit call names.
func (p *Policy) writeTargets(call Call, f *Facts) []string {
	s, ok := call.Input["path"].(string)
	if !ok {
		return nil
	}
	return []string{resolvePath(s, f).clean}
}

func homeSegs(home string) []string {
	if home == "" {
		return nil
	}
	return splitPath(strings.ToLower(cleanAbs(home, "/")))
}

// protectedHit reports the protected pattern a path string falls under, in
// its written, cleaned or symlink-resolved form. exemptRead lets paths in
// allowReadPaths through; shell adds shellProtectedPaths.
func (p *Policy) protectedHit(s string, f *Facts, hs []string, exemptRead, shell bool) (string, bool) {
	r := resolvePath(s, f)
	forms := [3]string{r.clean, r.raw, r.real}
	for i, form := range forms {
		if form == "" || (i == 1 && form == r.clean) || (i == 2 && form == r.clean) {
			continue
		}
		k := memoKey{form, exemptRead, shell}
		h, ok := p.memo.get(f.Home, k)
		if !ok {
			h.pattern, h.hit = p.matchForm(splitPath(strings.ToLower(form)), hs, exemptRead, shell)
			p.memo.put(f.Home, k, h)
		}
		if h.hit {
			return h.pattern, true
		}
	}
	return "", false
}

func (p *Policy) matchForm(segs, hs []string, exemptRead, shell bool) (string, bool) {
	hit := firstMatch(p.protected, segs, hs)
	if hit == "" && shell {
		hit = firstMatch(p.shellProtected, segs, hs)
	}
	if hit == "" {
		return "", false
	}
	allowRead := firstMatch(p.allowRead, segs, hs) != ""
	if exemptRead && allowRead {
		return "", false
	}
	if !allowRead && hit == ".env*" && len(segs) > 0 && exampleName(segs[len(segs)-1]) {
		return "", false // .env.example.bak, .env.template: a copy of no secret
	}
	return hit, true
}

// readableOnly reports whether the path string s, in any of its forms, is
// in allowReadPaths: protected, yet readable by every tool.
func (p *Policy) readableOnly(s string, f *Facts, hs []string) bool {
	r := resolvePath(s, f)
	for _, form := range [3]string{r.clean, r.raw, r.real} {
		if form != "" && firstMatch(p.allowRead, splitPath(strings.ToLower(form)), hs) != "" {
			return true
		}
	}
	return false
}

// exampleName reports whether a .env file's name marks it as an example
// or template (.env.example, .env.local.sample, .env.template.bak): files
// that show which variables exist and hold no values. The exact names in
// allowReadPaths stay unwritable; their copies and kin are not secrets.
func exampleName(base string) bool {
	parts := strings.Split(strings.ToLower(base), ".")
	for _, p := range parts[1:] {
		switch p {
		case "example", "sample", "template", "dist", "defaults":
			return true
		}
	}
	return false
}

func firstMatch(set []entry, segs, hs []string) string {
	for i := range set {
		if matchEntry(&set[i], segs, hs) {
			return set[i].pattern
		}
	}
	return ""
}

func matchEntry(e *entry, segs, hs []string) bool {
	for j := range e.globs {
		if e.globs[j].matchPath(segs, hs) {
			return true
		}
	}
	return false
}

// hardLinkBlock stops a write to a file that has another name (a hard
// link): the other name may be a start-up file or a secret's file, which
// the path written does not show. Pi's write and edit tools write the file
// in place, so every name gets the content.
// piFile: s is a path Pi's own file tools open (resolveToCwd's reading of
// it is taken too), not a shell's word.
func (p *Policy) hardLinkBlock(what, s string, f *Facts, piFile bool) (Decision, bool) {
	forms := [2]string{path.Clean(rawPath(s, f))}
	if piFile {
		if abs, ok := paths.ToolPath(f.Home, f.Cwd, s); ok && abs != forms[0] {
			forms[1] = abs
		}
	}
	for _, form := range forms {
		if form == "" {
			continue
		}
		if n := f.HardLinks(form); n > 1 {
			return Decision{Action: ActionBlock, Code: CodeProtectedPath, Rule: "hard link", Subject: s,
				Reason: fmt.Sprintf("%s names %q, a file with %d names (hard links); another of them may be a protected path (a start-up file such as ~/.bashrc), so piagent does not let a tool write it; write a new file instead (rm, then write)", what, s, n)}, true
		}
	}
	return Decision{}, false
}
