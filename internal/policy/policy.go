package policy

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
)

//go:embed base-policy.json
var basePolicyJSON []byte

// Layers a policy value can come from.
const (
	LayerBase    = "base"
	LayerUser    = "user"
	LayerProject = "project"
)

// Actions a Decision can carry.
const (
	ActionAllow   = "allow"
	ActionBlock   = "block"
	ActionConfirm = "confirm"
	ActionWarn    = "warn"
)

// Policy is the effective policy: the base, then the user's override, then
// what the project's override may add. Build one with Load or Merge; the zero
// value and nil block every call.
type Policy struct {
	err error // a file that could not be read or parsed: every decision blocks

	mode         string
	projectMode  string // a stricter mode the project chose; "" when none
	profile      string
	registryMode string
	sandbox      string
	serverOff    bool
	passEnv      []string
	// firstSightAsk: catalogues wait for a person at first sight.
	firstSightAsk bool
	// network: "" (the default, registries), or what a file chose;
	// allowHosts: the person's hosts for the proxy.
	network    string
	allowHosts []string

	protected      []entry
	shellProtected []entry
	allowRead      []entry

	allowedTools map[string]string   // tool → layer
	capabilities map[string][]string // tool → capabilities
	capSource    map[string]string   // tool → layer

	execRules    []execRule
	ruleActions  map[string]ruleAction // shell rule id → override
	builtinTools map[string]bool       // the piagent_ tools of this build
	sources      []Source
	violations   []Violation
	files        map[string]string // layer → file path
	docsPatterns []glob
	hintCache    []string // see hints
	memo         *matchMemo
	// stores: LoadSettings's raw protected and readable paths, for
	// SecretStores (nil in a policy Merge built).
	stores *stores
}

type entry struct {
	pattern string
	layer   string
	globs   []glob
}

type execRule struct {
	ExecRule
	layer string
}

type ruleAction struct {
	action string
	floor  bool // from a project: the rule's action becomes at least this strict
	layer  string
}

// Source says which file an effective value came from.
type Source struct {
	Field string `json:"field"`
	Value string `json:"value"`
	Layer string `json:"layer"` // base, user or project
	File  string `json:"file"`  // "" for the embedded base policy
}

// Violation is something a project policy file tried that would loosen the
// policy; it is ignored and reported (doctor shows it).
type Violation struct {
	File   string `json:"file"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Err is the error that makes this policy block every call, or nil.
func (p *Policy) Err() error {
	if p == nil {
		return fmt.Errorf("no policy loaded")
	}
	return p.err
}

// Violations lists what a project file tried to loosen, in file order.
func (p *Policy) Violations() []Violation {
	if p == nil {
		return nil
	}
	return slices.Clone(p.violations)
}

// Sources tells where each effective value came from, sorted by field.
func (p *Policy) Sources() []Source {
	if p == nil {
		return nil
	}
	out := slices.Clone(p.sources)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// Mode is the default mode of the merged policy (before a person's choice in
// Facts.Mode).
func (p *Policy) Mode() string { return p.mode }

// RegistryMode is "advisory" or "enforce"; PermissionProfile "standard" or
// "trusted-full-access".
func (p *Policy) RegistryMode() string      { return p.registryMode }
func (p *Policy) PermissionProfile() string { return p.profile }

// ServerSandbox is "on" (the default) or "off".
func (p *Policy) ServerSandbox() string {
	if p.serverOff {
		return ServerSandboxOff
	}
	return ServerSandboxOn
}

// PassEnv lists the variables the person's own policy passes to every
// confined command and server, beyond the default set.
func (p *Policy) PassEnv() []string { return p.passEnv }

// FirstSight is "show" (the default) or "ask".
func (p *Policy) FirstSight() string {
	if p.firstSightAsk {
		return FirstSightAsk
	}
	return FirstSightShow
}

// Network is "registries" (the default), "on" or "off": the network of
// the agent's commands and the servers.
func (p *Policy) Network() string {
	if p.network == "" {
		return NetworkRegistries
	}
	return p.network
}

// NetworkChosen reports a network a policy file named (not the default):
// where the proxy cannot be applied, a chosen "registries" refuses the
// command, the default gives it the host's network with a warning.
func (p *Policy) NetworkChosen() bool { return p.network != "" }

// AllowHosts are the hosts the person's own policy lets the proxy reach
// beyond the package registries.
func (p *Policy) AllowHosts() []string { return p.allowHosts }

// networkRank orders the modes, narrowest first.
func networkRank(n string) int {
	switch n {
	case NetworkOff:
		return 0
	case NetworkRegistries:
		return 1
	}
	return 2
}

// Sandbox is "auto" (the default), "required" or "namespaces".
func (p *Policy) Sandbox() string {
	if p.sandbox == "" {
		return SandboxAuto
	}
	return p.sandbox
}

// ProtectedPaths lists the effective protected-path patterns.
func (p *Policy) ProtectedPaths() []string { return patterns(p.protected) }

// ShellProtectedPaths lists the patterns checked in addition for shell commands.
func (p *Policy) ShellProtectedPaths() []string { return patterns(p.shellProtected) }

// AllowReadPaths lists the patterns that stay readable although protected.
func (p *Policy) AllowReadPaths() []string { return patterns(p.allowRead) }

func patterns(es []entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.pattern
	}
	return out
}

// Input names a policy file for Merge. Data nil means the file does not exist.
type Input struct {
	File string
	Data []byte
}

// Merge builds the effective policy from the base, the user's and the
// project's files. It is pure; Load reads the files and calls it. A file that
// does not parse makes the result block every call, and the error is
// returned as well.
func Merge(user, project Input) (*Policy, error) {
	base, err := ParseFile("base-policy.json (embedded)", basePolicyJSON)
	if err != nil {
		panic("policy: embedded base policy: " + err.Error())
	}
	p := &Policy{
		allowedTools: map[string]string{},
		capabilities: map[string][]string{},
		capSource:    map[string]string{},
		ruleActions:  map[string]ruleAction{},
		builtinTools: map[string]bool{},
		files:        map[string]string{LayerBase: ""},
		memo:         newMatchMemo(),
	}
	for _, t := range base.AlwaysAllowedTools {
		if strings.HasPrefix(t, "piagent_") {
			p.builtinTools[t] = true
		}
	}
	for t := range base.ToolCapabilities {
		if strings.HasPrefix(t, "piagent_") {
			p.builtinTools[t] = true
		}
	}
	p.apply(base, LayerBase, "")
	for _, in := range []struct {
		Input
		layer string
	}{{user, LayerUser}, {project, LayerProject}} {
		if in.Data == nil {
			continue
		}
		f, err := ParseFile(in.File, in.Data)
		if err != nil {
			p.err = err
			return p, err
		}
		p.files[in.layer] = in.File
		p.apply(f, in.layer, in.File)
	}
	p.finish()
	return p, nil
}

func (p *Policy) src(field, value, layer, file string) {
	p.sources = append(p.sources, Source{Field: field, Value: value, Layer: layer, File: file})
}

func (p *Policy) violate(file, field, reason string) {
	p.violations = append(p.violations, Violation{File: file, Field: field, Reason: reason})
}

// apply lays one file over the policy. The base and the user may set
// anything; the project may only tighten, and what it tries beyond that is
// recorded as a violation.
func (p *Policy) apply(f *File, layer, file string) {
	proj := layer == LayerProject
	p.applySettings(f, layer, file, proj)
	p.applyPaths(f, layer, file, proj)
	p.applyTools(f, layer, file, proj)
	p.applyExecRules(f, layer, file, proj)
	p.applyRemovals(f, layer, file, proj)
}

// applySettings merges the single-valued settings: mode, permission
// profile, sandboxes and the tool registry's mode.
func (p *Policy) applySettings(f *File, layer, file string, proj bool) {
	if f.Mode != "" {
		switch {
		case !proj:
			p.mode = f.Mode
			p.src("mode", f.Mode, layer, file)
		case modeRank(f.Mode) <= modeRank(p.mode):
			p.projectMode = f.Mode
			p.src("mode", f.Mode+" (project cap)", layer, file)
		case modeRank(f.Mode) > modeRank(p.mode):
			p.violate(file, "mode", fmt.Sprintf("mode %q is more permissive than %q; a repository may only choose a stricter mode", f.Mode, p.mode))
		}
	}
	if f.PermissionProfile != "" {
		switch {
		case !proj:
			p.profile = f.PermissionProfile
			p.src("permissionProfile", f.PermissionProfile, layer, file)
		case f.PermissionProfile == ProfileTrustedFullAccess:
			if p.profile != ProfileTrustedFullAccess {
				p.violate(file, "permissionProfile", "trusted-full-access can only be chosen in the user's own policy file")
			}
		case f.PermissionProfile != p.profile:
			p.profile = f.PermissionProfile
			p.src("permissionProfile", f.PermissionProfile, layer, file)
		}
	}
	switch {
	case f.ServerSandbox == ServerSandboxOff && proj:
		p.violate(file, "serverSandbox", "serverSandbox off: only your own policy file can start servers unconfined")
	case f.ServerSandbox != "" && !proj:
		p.serverOff = f.ServerSandbox == ServerSandboxOff
		p.src("serverSandbox", f.ServerSandbox, layer, file)
	}
	// Which of Pi's variables reach the agent's commands and the servers
	// is the person's choice alone: a repository naming a key would hand
	// it to code it controls.
	switch {
	case len(f.PassEnv) > 0 && proj:
		p.violate(file, "passEnv", "passEnv: only your own policy file can pass variables to commands and servers")
	case len(f.PassEnv) > 0:
		p.passEnv = append(p.passEnv, f.PassEnv...)
		p.src("passEnv", strings.Join(f.PassEnv, ","), layer, file)
	}
	// Looking first is stricter than being shown: a repository may ask
	// for it, never take it away.
	switch {
	case f.FirstSight == FirstSightShow && proj && p.firstSightAsk:
		p.violate(file, "firstSight", "firstSight show would lower ask; a repository may only ask for ask")
	case f.FirstSight != "":
		p.firstSightAsk = f.FirstSight == FirstSightAsk
		p.src("firstSight", f.FirstSight, layer, file)
	}
	// Taking the network away is narrower: a repository may do it, never
	// give it back.
	switch {
	case f.Network != "" && proj && networkRank(f.Network) > networkRank(p.Network()):
		p.violate(file, "network", "network "+f.Network+" would widen "+p.Network()+"; a repository may only narrow the network (on, registries, off)")
	case f.Network != "":
		p.network = f.Network
		p.src("network", f.Network, layer, file)
	}
	// The hosts the proxy reaches are the person's to name: a repository
	// naming one would open a way out for code it controls.
	switch {
	case len(f.AllowHosts) > 0 && proj:
		p.violate(file, "allowHosts", "allowHosts: only your own policy file can name hosts the agent's commands reach")
	case len(f.AllowHosts) > 0:
		p.allowHosts = append(p.allowHosts, f.AllowHosts...)
		p.src("allowHosts", strings.Join(f.AllowHosts, ","), layer, file)
	}
	// A repository may raise the sandbox's level (auto < required <
	// namespaces), never lower it.
	if f.Sandbox != "" && f.Sandbox != p.Sandbox() {
		if !proj || sandboxRank(f.Sandbox) > sandboxRank(p.Sandbox()) {
			p.sandbox = f.Sandbox
			p.src("sandbox", f.Sandbox, layer, file)
		} else {
			p.violate(file, "sandbox", "sandbox "+f.Sandbox+" would lower "+p.Sandbox()+"; a repository may only raise the sandbox's level")
		}
	}
	if f.RegistryMode != "" {
		switch {
		case !proj || f.RegistryMode == RegistryEnforce:
			if !proj || p.registryMode != RegistryEnforce {
				p.registryMode = f.RegistryMode
				p.src("registryMode", f.RegistryMode, layer, file)
			}
		case p.registryMode == RegistryEnforce:
			p.violate(file, "registryMode", "registryMode advisory would lower enforce; a repository may only raise the registry to enforce")
		}
	}
}

// applyPaths merges the protected, shell-protected and readable paths.
func (p *Policy) applyPaths(f *File, layer, file string, proj bool) {
	addEntries := func(dst *[]entry, field string, pats []string) {
		for _, pat := range pats {
			if slices.ContainsFunc(*dst, func(e entry) bool { return e.pattern == pat }) {
				continue
			}
			gs, _ := compileGlobs(pat) // validated by ParseFile
			*dst = append(*dst, entry{pattern: pat, layer: layer, globs: gs})
			p.src(field, pat, layer, file)
		}
	}
	addEntries(&p.protected, "protectedPaths", f.ProtectedPaths)
	addEntries(&p.shellProtected, "shellProtectedPaths", f.ShellProtectedPaths)
	if proj {
		for _, a := range f.AllowReadPaths {
			p.violate(file, "allowReadPaths", fmt.Sprintf("%q: a repository cannot make a path readable", a))
		}
	} else {
		addEntries(&p.allowRead, "allowReadPaths", f.AllowReadPaths)
	}
}

// applyTools merges the tool registry: always-allowed tools and tools'
// capabilities, the user's alone.
func (p *Policy) applyTools(f *File, layer, file string, proj bool) {
	for _, t := range f.AlwaysAllowedTools {
		switch {
		case proj:
			p.violate(file, "alwaysAllowedTools", fmt.Sprintf("%q: a repository cannot register tools", t))
		case strings.HasPrefix(t, "piagent_") && !p.builtinTools[t]:
			p.violate(file, "alwaysAllowedTools", fmt.Sprintf("%q: piagent_ names are reserved for piagent's own tools", t))
		default:
			if _, ok := p.allowedTools[t]; !ok {
				p.allowedTools[t] = layer
				p.src("alwaysAllowedTools", t, layer, file)
			}
		}
	}
	for _, t := range sortedKeys(f.ToolCapabilities) {
		switch {
		case proj:
			p.violate(file, "toolCapabilities", fmt.Sprintf("%q: a repository cannot register tools", t))
		case strings.HasPrefix(t, "piagent_") && !p.builtinTools[t]:
			p.violate(file, "toolCapabilities", fmt.Sprintf("%q: piagent_ names are reserved for piagent's own tools", t))
		default:
			p.capabilities[t] = slices.Clone(f.ToolCapabilities[t])
			p.capSource[t] = layer
			p.src("toolCapabilities", t+": "+strings.Join(f.ToolCapabilities[t], ","), layer, file)
		}
	}
}

// applyExecRules merges the exec rules and the actions of the shell rules.
func (p *Policy) applyExecRules(f *File, layer, file string, proj bool) {
	for _, r := range f.ExecRules {
		i := slices.IndexFunc(p.execRules, func(e execRule) bool { return e.ID == r.ID })
		switch {
		case i < 0:
			p.execRules = append(p.execRules, execRule{ExecRule: r, layer: layer})
			p.src("execRules", r.ID, layer, file)
		case proj && actionRank(r.Action) < actionRank(p.execRules[i].Action):
			p.violate(file, "execRules", fmt.Sprintf("%q: a repository cannot weaken an existing rule", r.ID))
		default:
			p.execRules[i] = execRule{ExecRule: r, layer: layer}
			p.src("execRules", r.ID, layer, file)
		}
	}
	for _, id := range sortedKeys(f.ExecRuleActions) {
		a := f.ExecRuleActions[id]
		switch {
		case !proj:
			p.ruleActions[id] = ruleAction{action: a, layer: layer}
			p.src("execRuleActions", id+": "+a, layer, file)
		case a == ActionAllow:
			p.violate(file, "execRuleActions", fmt.Sprintf("%q: a repository cannot allow what a rule blocks or asks about", id))
		default:
			cur, ok := p.ruleActions[id]
			if ok && actionRank(a) <= actionRank(cur.action) {
				if actionRank(a) < actionRank(cur.action) {
					p.violate(file, "execRuleActions", fmt.Sprintf("%q: %s would weaken %s", id, a, cur.action))
				}
				continue
			}
			p.ruleActions[id] = ruleAction{action: a, floor: true, layer: layer}
			p.src("execRuleActions", id+": at least "+a, layer, file)
		}
	}
}

// applyRemovals takes out what the user's file removes.
func (p *Policy) applyRemovals(f *File, layer, file string, proj bool) {
	if f.Remove != nil {
		removeEntries := func(dst *[]entry, field string, pats []string) {
			for _, pat := range pats {
				if proj {
					p.violate(file, "remove."+field, fmt.Sprintf("%q: a repository cannot remove a protected path", pat))
					continue
				}
				before := len(*dst)
				*dst = slices.DeleteFunc(*dst, func(e entry) bool { return e.pattern == pat })
				if len(*dst) < before {
					p.src("remove."+field, pat, layer, file)
				}
			}
		}
		removeEntries(&p.protected, "protectedPaths", f.Remove.ProtectedPaths)
		removeEntries(&p.shellProtected, "shellProtectedPaths", f.Remove.ShellProtectedPaths)
		for _, id := range f.Remove.ExecRules {
			if proj {
				p.violate(file, "remove.execRules", fmt.Sprintf("%q: a repository cannot remove a rule", id))
				continue
			}
			p.execRules = slices.DeleteFunc(p.execRules, func(e execRule) bool { return e.ID == id })
			p.src("remove.execRules", id, layer, file)
		}
	}
}

// finish prepares the derived tables once, so that Decide does no compiling.
func (p *Policy) finish() {
	for _, d := range []string{"/docs/**", "/doc/**", "/plans/**", "/reports/**"} {
		gs, _ := compileGlobs(d)
		p.docsPatterns = append(p.docsPatterns, gs...)
	}
	p.hintCache = nil
	p.hintCache = p.hints()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func actionRank(a string) int {
	switch a {
	case ActionAllow:
		return 0
	case ActionWarn:
		return 1
	case ActionConfirm:
		return 2
	case ActionBlock:
		return 3
	}
	return 3
}

// LayerRegistry names protected paths that come from the registry of files
// that decide what runs (package registry): credentials piagent, Pi and the
// adapter keep, wherever the agent dir is.
const LayerRegistry = "registry"

// WithSecrets returns a copy of p that also protects the given absolute
// paths (a folder protects everything beneath it), as the registry's secret
// entries. No policy file can remove them.
func (p *Policy) WithSecrets(files, dirs []string) *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.protected = slices.Clone(p.protected)
	add := func(pat string) {
		if slices.ContainsFunc(c.protected, func(e entry) bool { return e.pattern == pat }) {
			return
		}
		gs, err := compileGlobs(pat)
		if err != nil {
			return
		}
		c.protected = append(c.protected, entry{pattern: pat, layer: LayerRegistry, globs: gs})
	}
	for _, f := range files {
		add(escapeGlob(f))
	}
	for _, d := range dirs {
		add(escapeGlob(d) + "/**")
	}
	c.hintCache = nil
	c.memo = newMatchMemo()
	return &c
}

func sandboxRank(level string) int {
	switch level {
	case SandboxRequired:
		return 1
	case SandboxNamespaces:
		return 2
	}
	return 0
}
