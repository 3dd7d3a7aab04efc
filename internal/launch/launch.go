// Package launch is the gate in front of the connection: it turns a computed
// gate into the one MCP configuration file pi-mcp-adapter reads when Pi is
// started with PI_MCP_CONFIG_MODE=exclusive and --mcp-config, so that the
// adapter can only ever see servers that may run.
//
// What goes in (Config):
//   - every server of the user's own configuration, and every repository
//     server that is approved and unchanged, as its full merged definition;
//   - the user's own imports of kinds whose files live outside the
//     repository, kept as an `imports` array (the adapter expands the imports
//     of that one file even in exclusive mode), and the servers they bring
//     are not copied; repository-relative kinds (vscode, opencode) and
//     anything a repository layer selected are only ever written as explicit,
//     approved definitions;
//   - servers of the user's own Pi packages and Agent Plugins, which
//     exclusive mode does not load, as definitions under the adapter's names;
//   - the merged settings, minus what a repository layer set that widens
//     what runs (the user's own value beneath is kept);
//   - the user's own claudePlugins, when a user layer is the one the adapter
//     takes them from.
//
// Repository servers that are pending approval, changed since approval or
// rejected are held back and listed (Held) with the command that approves
// each. Write stores the file under ~/.pi/piagent/launch, outside every
// repository; Refresh rewrites it after a decision taken inside a session
// the launcher started.
package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/imports"
	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandboxexec"
)

// Environment variables the launcher sets for Pi.
const (
	EnvMode     = "PI_MCP_CONFIG_MODE"    // "exclusive": the adapter reads only --mcp-config
	EnvLauncher = sandboxexec.EnvLauncher // "1": the session was started by `piagent pi`
	EnvConfig   = "PIAGENT_LAUNCH_CONFIG" // the generated file
	EnvProject  = "PIAGENT_PROJECT"       // the project key the file was generated for
	EnvBin      = "PIAGENT_BIN"           // piagent's absolute path, for the extension
)

// Held is a repository server left out of the generated configuration.
type Held struct {
	Server  string `json:"server"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Approve string `json:"approve"` // the command that lets it run
}

// alwaysDropped are settings that only choose where servers come from. In
// exclusive mode the adapter ignores them, and the servers they brought are
// written out explicitly, so they are left out whoever set them.
var alwaysDropped = []string{"hostConfigDiscovery", "ancestorConfigRoots", "agentPluginPaths"}

// widens reports whether a repository layer's value for a settings key lets
// more run, or run with less oversight, than the adapter's default or the
// user's own value. Such values are not carried into the generated file.
func widens(key string, v any) bool {
	switch key {
	case "approveTools":
		return v == false // true or a list of globs asks more, not less
	case "outputGuard":
		return v != true // false, or limits of the repository's choosing
	case "samplingAutoApprove", "sampling", "elicitation", "autoAuth":
		return v != false
	case "jev":
		return v != false // sends metadata to a semantic-search service
	case "trace", "oauthDir", "oauthCredentialStore", "authRequiredMessage":
		return true // where files and credentials go, and text shown to the model
	}
	return false
}

// Config is the configuration of what may run, for the adapter in exclusive
// mode, and the repository servers held back. It is pure: it reads only g.
func Config(g *gate.Gate) (cfg map[string]any, held []Held) {
	v := g.View
	cfg = map[string]any{}
	kinds := keptKinds(v)
	for {
		servers, conflict := plan(g, kinds)
		if conflict == "" {
			cfg["mcpServers"] = servers
			break
		}
		kinds = slices.DeleteFunc(kinds, func(k string) bool { return k == conflict })
	}
	if len(kinds) > 0 {
		list := make([]any, len(kinds))
		for i, k := range kinds {
			list[i] = k
		}
		cfg["imports"] = list
	}
	if cp, ok := claudePlugins(g); ok {
		cfg["claudePlugins"] = cp
	}
	if s := settings(v); len(s) > 0 {
		cfg["settings"] = s
	}
	for _, s := range g.Servers {
		if !s.Repository || s.Config == nil || !s.Config.AdapterLoads {
			continue
		}
		switch s.State {
		case gate.PendingApproval, gate.ApprovalChanged, gate.Rejected:
			held = append(held, Held{Server: s.Name, State: s.State, Reason: s.Reason, Approve: "piagent-mcp approve " + s.Name})
		}
	}
	return cfg, held
}

// keptKinds are the imports of the user's own layers that read files outside
// the repository, highest layer first, each layer in its own order: within
// one file the adapter lets the first listed kind win.
func keptKinds(v *mcpconfig.View) []string {
	var out []string
	for i := len(v.Layers) - 1; i >= 0; i-- {
		l := v.Layers[i]
		if !l.Loaded || l.Repository {
			continue
		}
		for _, k := range l.Imports {
			if imports.HomeOnly(k) && !slices.Contains(out, k) && !kindInProject(v, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// kindInProject reports whether any file the adapter reads for kind lies in
// the project (a home inside a checkout, say).
func kindInProject(v *mcpconfig.View, kind string) bool {
	for _, t := range v.ImportTargets {
		if t.Kind == kind && t.Adapter && inProject(v, t.Path) {
			return true
		}
	}
	return false
}

func inProject(v *mcpconfig.View, p string) bool {
	return v.Cwd != "" && filepath.IsAbs(p) && paths.Within(v.Cwd, filepath.Clean(p))
}

// plan builds mcpServers for the kept kinds. conflict names a kept kind whose
// entry, laid beneath an explicit definition of the same name, would change
// what runs; the caller drops that kind and plans again.
func plan(g *gate.Gate, kinds []string) (servers map[string]any, conflict string) {
	servers = map[string]any{}
	keptPlugins := keepsClaudePlugins(g)
	for _, s := range g.Servers {
		cs := s.Config
		if cs == nil || !cs.AdapterLoads {
			continue
		}
		imp, byKept := keptContribution(cs, kinds)
		if s.Repository && gate.Blocks(s.State) {
			// Held back, or disabled (whose approval is then unknown): no
			// definition of that name may run, not even what a kept import
			// would bring. A disabled stub also keeps the name shadowing a
			// Claude plugin server of the same namespace, as it does now.
			if byKept || keptPlugins {
				servers[s.Name] = map[string]any{"disabled": true}
			}
			continue
		}
		if fromKeptSource(cs, kinds, keptPlugins) {
			continue // the adapter reads it itself from the same file
		}
		def := definition(cs, imp, byKept)
		if byKept && !reflect.DeepEqual(mcpconfig.MergeEntry(imp.Entry, def), cs.Entry) {
			return nil, imp.Kind
		}
		servers[s.Name] = def
	}
	return servers, ""
}

// keptContribution is the user-owned contribution of the first kept kind in
// the server's chain: what the adapter lays beneath our definition.
func keptContribution(cs *mcpconfig.Server, kinds []string) (mcpconfig.Contribution, bool) {
	best, found := -1, mcpconfig.Contribution{}
	for _, c := range cs.Contributions {
		if c.Repository || c.Kind == "" || c.Layer == mcpconfig.LayerHost {
			continue
		}
		if i := slices.Index(kinds, c.Kind); i >= 0 && (best < 0 || i < best) {
			best, found = i, c
		}
	}
	return found, best >= 0
}

// fromKeptSource reports whether the server comes, whole, from one source the
// generated file keeps by reference: a kept import of a user layer, or a
// user-chosen Claude plugin outside the project.
func fromKeptSource(cs *mcpconfig.Server, kinds []string, keptPlugins bool) bool {
	if len(cs.Contributions) != 1 {
		return false
	}
	c := cs.Contributions[0]
	if c.Repository {
		return false
	}
	if c.Layer == mcpconfig.LayerClaudePlugin {
		return keptPlugins
	}
	return c.Kind != "" && c.Layer != mcpconfig.LayerHost && slices.Contains(kinds, c.Kind)
}

// definition is what to write for a server: the merged definition, or, when
// a kept import brings the base, only what the user's own layers lay over it
// if that merges back to the same thing (so the import's literal values are
// not copied).
func definition(cs *mcpconfig.Server, imp mcpconfig.Contribution, byKept bool) map[string]any {
	full := maps.Clone(cs.Entry)
	if !byKept || cs.Contributions[0].Kind != imp.Kind || cs.Contributions[0].Layer != imp.Layer {
		return full
	}
	var over mcpconfig.Entry
	for _, c := range cs.Contributions[1:] {
		if c.Repository || c.Kind != "" {
			return full
		}
		over = mcpconfig.MergeEntry(over, c.Entry)
	}
	if over == nil {
		return full
	}
	if reflect.DeepEqual(mcpconfig.MergeEntry(imp.Entry, over), cs.Entry) {
		return maps.Clone(over)
	}
	return full
}

// chooser is the highest loaded layer that sets claudePlugins: the adapter
// takes the whole list from it.
func chooser(v *mcpconfig.View) (mcpconfig.Layer, bool) {
	for i := len(v.Layers) - 1; i >= 0; i-- {
		if l := v.Layers[i]; l.Loaded && l.HasClaudePlugins {
			return l, true
		}
	}
	return mcpconfig.Layer{}, false
}

// keepsClaudePlugins reports whether the user's claudePlugins list can be
// kept by reference: a user layer chose it and none of the servers it brings
// is repository-controlled.
func keepsClaudePlugins(g *gate.Gate) bool {
	l, ok := chooser(g.View)
	if !ok || l.Repository {
		return false
	}
	for _, s := range g.View.Servers {
		if s.Layer == mcpconfig.LayerClaudePlugin && s.RepositoryControlled {
			return false
		}
	}
	return true
}

// claudePlugins is the list to write: the user's own entries that point
// outside the project, all of them when their servers may be read by
// reference, else only the skills-only ones (the servers are then written
// explicitly).
func claudePlugins(g *gate.Gate) ([]any, bool) {
	l, ok := chooser(g.View)
	if !ok || l.Repository {
		return nil, false
	}
	list, ok := l.ClaudePlugins.([]any)
	if !ok {
		return nil, false
	}
	whole := keepsClaudePlugins(g)
	var out []any
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		p, _ := m["path"].(string)
		if p == "" || pluginInProject(g.View, p) {
			continue
		}
		if !whole && m["mcp"] == true {
			if m["skills"] != true {
				continue
			}
			m = maps.Clone(m)
			m["mcp"] = false
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

// pluginInProject resolves a claudePlugins path the adapter's way (~, ~/,
// absolute, else relative to the cwd) and reports whether it is in the
// project.
func pluginInProject(v *mcpconfig.View, p string) bool {
	p = strings.TrimSpace(p)
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = paths.Expand(v.Home, p)
	case !filepath.IsAbs(p):
		return true
	}
	return inProject(v, p)
}

// settings is the merged settings without what a repository layer set that
// widens what runs; the user's own value beneath, if any, takes its place.
func settings(v *mcpconfig.View) map[string]any {
	out := maps.Clone(v.Settings)
	if out == nil {
		return nil
	}
	for _, k := range alwaysDropped {
		delete(out, k)
	}
	for _, k := range slices.Sorted(maps.Keys(out)) {
		origins := v.SettingOrigins[k]
		if len(origins) == 0 {
			continue
		}
		top := origins[len(origins)-1]
		if !top.Repository || !widens(k, top.Value) {
			continue
		}
		delete(out, k)
		for i := len(origins) - 2; i >= 0; i-- {
			if !origins[i].Repository {
				out[k] = origins[i].Value
				break
			}
		}
	}
	return out
}

// Path is where the generated configuration of a project lives:
// ~/.pi/piagent/launch/<basename>-<12 hex of sha256(project)>.json.
func Path(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	base := filepath.Base(project)
	if base == "/" || base == "." || base == "" {
		base = "root"
	}
	return filepath.Join(registry.LaunchDir(home), base+"-"+hex.EncodeToString(sum[:6])+".json")
}

// Launched is server name's definition in project's generated
// configuration, as the adapter reads it in a session `piagent pi` started
// (wrapped in the server sandbox): the definition the adapter hashes for
// its cache entry there. ok is false when there is none.
func Launched(home, project, name string) (map[string]any, bool) {
	data, err := os.ReadFile(Path(home, project))
	if err != nil {
		return nil, false
	}
	v, _, err := jsonc.Parse(data)
	if err != nil {
		return nil, false
	}
	doc, _ := v.(map[string]any)
	servers, _ := doc["mcpServers"].(map[string]any)
	e, ok := servers[name].(map[string]any)
	return e, ok
}

// Write stores cfg for project at Path(home, project): folders 0700, the file
// 0600, written to a temporary file in the same folder, synced and renamed
// over the old one.
func Write(home, project string, cfg map[string]any) (string, error) {
	if home == "" {
		return "", paths.ErrNoHome
	}
	p := Path(home, project)
	dir := filepath.Dir(p)
	for _, d := range []string{filepath.Join(home, ".pi"), filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("cannot create %s: %w", d, err)
		}
	}
	// The two folders piagent owns are private whatever made them first.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o700); err != nil {
			return "", fmt.Errorf("cannot make %s private: %w", d, err)
		}
	}
	data, err := encode(cfg)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(p, data); err != nil {
		return "", fmt.Errorf("cannot write %s: %w", p, err)
	}
	return p, nil
}

func encode(cfg map[string]any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cfg); err != nil {
		return nil, fmt.Errorf("cannot encode the launch configuration: %w", err)
	}
	return []byte(b.String()), nil
}

// Generate computes the gate for cwd over the real configuration (an
// inherited PI_MCP_CONFIG_MODE is ignored), writes the launch configuration
// and returns its path, the gate and the servers held back.
func Generate(home, cwd string, getenv func(string) string, confine *Confine) (path string, g *gate.Gate, held []Held, err error) {
	if home == "" {
		return "", nil, nil, paths.ErrNoHome
	}
	g, err = gate.Load(gate.Options{Home: home, Cwd: cwd, Getenv: gate.HideMode(getenv)})
	if err != nil {
		return "", nil, nil, err
	}
	cfg, held := Config(g)
	if confine != nil {
		confine.Wrap(cfg, g.Project)
	}
	path, err = Write(home, g.Project, cfg)
	if err != nil {
		return "", nil, nil, err
	}
	return path, g, held, nil
}

// Refresh rewrites the launch configuration after a decision, when the
// command runs inside a session `piagent pi` started (PIAGENT_LAUNCH_CONFIG
// is set); otherwise it does nothing. The session's project
// (PIAGENT_PROJECT) is refreshed when known, else project. The path is
// always computed, never taken from the environment.
func Refresh(home, project string, getenv func(string) string, confine *Confine) error {
	if getenv == nil || getenv(EnvConfig) == "" {
		return nil
	}
	if p := getenv(EnvProject); p != "" {
		project = p
	}
	key, err := approval.ProjectKey(project)
	if err != nil {
		return fmt.Errorf("cannot refresh the launch configuration: %w", err)
	}
	if _, _, _, err := Generate(home, key, getenv, confine); err != nil {
		return fmt.Errorf("cannot refresh the launch configuration: %w", err)
	}
	return nil
}

// Confine wraps the stdio servers of a generated configuration in
// `piagent sandbox exec --profile server`, so that every server the adapter
// starts from it runs confined. The definitions the gate approved (and their
// digests) are untouched: only the generated file carries the wrapper.
type Confine struct {
	// Bin is piagent's absolute path.
	Bin string
	// Lean is piagent-sandbox's, when it is installed beside piagent:
	// `piagent-sandbox exec` is `piagent sandbox exec` in a smaller binary.
	Lean string
}

// Wrap rewrites cfg's mcpServers in place. A remote server (url) is left as
// it is. One run through a container runtime, whose daemon socket is
// root-equivalent and could not be confined anyway (get and doctor say
// "not confined"), runs under `sandbox exec --env-only`: unconfined, with
// the server's environment allow-list.
func (c *Confine) Wrap(cfg map[string]any, project string) {
	servers, _ := cfg["mcpServers"].(map[string]any)
	for name, v := range servers {
		e, ok := v.(map[string]any)
		if !ok {
			continue
		}
		cmd, ok := e["command"].(string)
		if !ok || cmd == "" {
			continue
		}
		bin, args := c.Bin, []any{"sandbox", "exec", "--profile", "server", "--server", name, "--project", project}
		if ContainerRuntime(cmd, project) {
			// The runtime's daemon could not be confined anyway: the
			// runtime runs unconfined, but with the server's environment
			// allow-list, so Pi's keys do not reach it.
			args = append(args, "--env-only")
		}
		if c.Lean != "" {
			bin, args = c.Lean, args[1:]
		}
		// The adapter sets the definition's own env in the server's
		// environment, beside all of Pi's: the server keeps exactly those
		// keys, and of Pi's only what the person passes.
		if env, ok := e["env"].(map[string]any); ok && len(env) > 0 {
			keys := make([]string, 0, len(env))
			for k := range env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			args = append(args, "--keep-env", strings.Join(keys, ","))
		}
		args = append(args, "--", cmd)
		if orig, ok := e["args"].([]any); ok {
			args = append(args, orig...)
		}
		w := make(map[string]any, len(e))
		for k, x := range e {
			w[k] = x
		}
		w["command"], w["args"] = bin, args
		servers[name] = w
	}
}

// ContainerRuntime reports a command whose server runs through an installed
// container runtime (sandboxexec.ContainerRuntime), looked up on this
// process's PATH.
func ContainerRuntime(cmd, project string) bool {
	return sandboxexec.ContainerRuntime(cmd, project, os.Getenv("PATH"))
}
