// Package mcpconfig computes pi-mcp-adapter 2.36.0's exact view of MCP
// configuration for one home directory and working directory: the config
// layers it reads (with JSONC, the mcp-servers alias and whole-file skips),
// the shallow merge with its transport and URL removal rules, the settings
// merge, per-layer imports and host-config discovery, Agent Plugins, Pi
// packages and Claude plugins; and, beyond the adapter, the provenance of
// every fragment, which of them a repository controls, every file that could
// not be used, and every path any reader consulted.
//
// Load is the entry point. It reads files but takes every other input (home,
// cwd, environment) as a value.
package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/piagent/piagent/internal/imports"
	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/paths"
)

// ErrOptions is wrapped when Options cannot describe a view (home or cwd
// missing or relative).
var ErrOptions = errors.New("invalid mcpconfig options")

// Load computes the adapter's view for opts. Problems in files are not
// errors: they are reported in View.Skipped, as the adapter skips them. The
// View shares nested values between Layers, Contributions and Entries:
// treat it as read-only.
func Load(opts Options) (*View, error) {
	if opts.Home == "" || !filepath.IsAbs(opts.Home) {
		return nil, fmt.Errorf("%w: home %q is not an absolute path", ErrOptions, opts.Home)
	}
	if opts.Cwd == "" || !filepath.IsAbs(opts.Cwd) {
		return nil, fmt.Errorf("%w: working directory %q is not an absolute path", ErrOptions, opts.Cwd)
	}
	l := newLoader(opts)
	l.run()
	return l.view, nil
}

type loader struct {
	home, cwd         string
	realHome, realCwd string
	getenv            paths.Getenv
	configPath        string
	overlay           map[string][]byte
	view              *View
	consulted         map[string]bool
	results           map[string]*imports.Result
	kindOrder         []string
	gitRoot           *string
	layers            []*layerState
	filesRead         int // layers[:filesRead] have had their files read
}

// layerState is a layer while loading, with what provenance needs.
type layerState struct {
	*Layer
	reason string // why its own entries are repository-controlled
	size   int64  // the file's size; -1 when it is absent
}

func newLoader(opts Options) *loader {
	home, cwd := filepath.Clean(opts.Home), filepath.Clean(opts.Cwd)
	l := &loader{
		home: home, cwd: cwd,
		realHome: identity(home), realCwd: identity(cwd),
		getenv:     paths.Getenv(opts.Getenv),
		configPath: opts.ConfigPath,
		overlay:    opts.Overlay,
		consulted:  map[string]bool{},
		results:    map[string]*imports.Result{},
	}
	l.view = &View{Home: home, Cwd: cwd, Settings: map[string]any{}, SettingOrigins: map[string][]SettingOrigin{}}
	return l
}

func (l *loader) env(k string) string {
	if l.getenv == nil {
		return ""
	}
	return l.getenv(k)
}

func (l *loader) consult(p string) {
	if p == "" {
		return
	}
	l.consulted[resolvePath(l.cwd, p)] = true
}

// consultFile records p and, when it is a symlink, the file it resolves to.
func (l *loader) consultFile(p string) {
	l.consult(p)
	if r, err := realpath(p); err == nil && r != p {
		l.consult(r)
	}
}

func (l *loader) skip(s Skipped) { l.view.Skipped = append(l.view.Skipped, s) }

func (l *loader) fatal(path, layer, reason string) {
	l.skip(Skipped{Path: path, Layer: layer, Reason: FatalReason + reason})
}

// rel names p for a reason: relative to the project when inside it.
func (l *loader) rel(p string) string {
	for _, root := range []string{l.cwd, l.realCwd} {
		if paths.Within(root, p) {
			if r, err := filepath.Rel(root, p); err == nil {
				return r
			}
		}
	}
	return p
}

// inProject reports whether p lies in the project (cwd, lexically or real).
func (l *loader) inProject(p string) bool {
	return paths.Within(l.cwd, p) || paths.Within(l.realCwd, p) || paths.Within(l.realCwd, identity(p))
}

func (l *loader) run() {
	v := l.view
	if dir := strings.TrimSpace(l.env("PI_PACKAGE_DIR")); dir != "" {
		l.consult(filepath.Join(resolvePath(l.cwd, dir), "package.json"))
	}
	v.AgentDir = paths.AgentDir(l.home, l.cwd, l.getenv)
	v.ConfigDir = paths.ConfigDirName(l.getenv)
	v.Exclusive = strings.ToLower(strings.TrimSpace(l.env("PI_MCP_CONFIG_MODE"))) == "exclusive"

	l.readLayers()
	l.mergeSettings()
	l.mergeServers()
	l.finish()
}

// readLayers discovers and reads the file layers in precedence order,
// dropping duplicate paths as the adapter's getConfigSources does.
func (l *loader) readLayers() {
	v := l.view
	userPath := filepath.Join(v.AgentDir, "mcp.json")
	if l.configPath != "" {
		userPath = resolvePath(l.cwd, l.configPath)
	}
	defer l.readFiles()
	if v.Exclusive {
		l.addLayer(LayerPiGlobal, userPath)
		return
	}
	generic := filepath.Join(l.home, ".config", "mcp", "mcp.json")
	if generic != userPath {
		l.addLayer(LayerSharedGlobal, generic)
	}
	for i, p := range []string{filepath.Join(l.home, ".agents", "mcp.json"), filepath.Join(l.home, ".agents", "mcp", "mcp.json")} {
		if p == userPath || p == generic {
			continue
		}
		id := LayerAgentsGlobal
		if i == 1 {
			id = LayerAgentsNested
		}
		l.addLayer(id, p)
	}
	l.addLayer(LayerPiGlobal, userPath)
	l.readFiles() // the global layers' settings name the ancestor roots

	projectPath := resolvePath(l.cwd, ".mcp.json")
	projectPiPath := resolvePath(l.cwd, v.ConfigDir, "mcp.json")
	reserved := map[string]bool{identity(projectPath): true, identity(projectPiPath): true}
	for _, ls := range l.layers {
		reserved[identity(ls.Path)] = true
	}
	if root := l.ancestorRoot(); root != "" {
		type cand struct{ identity, path string }
		var order []cand
		for _, dir := range ancestorDirs(l.realCwd, root) {
			for _, p := range []string{resolvePath(dir, ".mcp.json"), resolvePath(dir, v.ConfigDir, "mcp.json")} {
				l.consult(p)
				id := identity(p)
				if reserved[id] || !exists(p) {
					continue
				}
				// An alias is moved to its nearest precedence position.
				for i := range order {
					if order[i].identity == id {
						order = append(order[:i], order[i+1:]...)
						break
					}
				}
				order = append(order, cand{id, p})
			}
		}
		for _, c := range order {
			ls := l.addLayer(LayerAncestor, c.path)
			if gr := l.findGitRoot(); gr != "" && paths.Within(gr, identity(c.path)) {
				ls.Repository = true
				ls.reason = "ancestor layer inside the working tree (" + c.path + ")"
			}
		}
	}
	if projectPath != userPath {
		ls := l.addLayer(LayerSharedProject, projectPath)
		ls.Repository, ls.reason = true, l.projectReason(projectPath)
	}
	if projectPiPath != userPath && projectPiPath != projectPath {
		ls := l.addLayer(LayerPiProject, projectPiPath)
		ls.Repository, ls.reason = true, l.projectReason(projectPiPath)
	}
}

func (l *loader) projectReason(p string) string {
	reason := "declared in the project's " + l.rel(p)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if r, err := realpath(p); err == nil && !l.inProjectReal(r) {
			reason += " (a symlink to " + r + ", outside the project)"
		}
	}
	return reason
}

func (l *loader) inProjectReal(p string) bool {
	return paths.Within(l.realCwd, p) || paths.Within(l.cwd, p)
}

// addLayer appends one config file to the view's layers; readFiles reads
// it once the layers are known.
func (l *loader) addLayer(id, path string) *layerState {
	ls := &layerState{Layer: &Layer{ID: id, Scope: scopeOf(id), Path: path}, size: -1}
	l.layers = append(l.layers, ls)
	l.consultFile(path)
	if data, ok := l.overlay[path]; ok {
		ls.size = int64(len(data))
	} else if fi, err := os.Stat(path); err == nil {
		ls.size = fi.Size()
	}
	return ls
}

// readResult is one layer's file, read and parsed.
type readResult struct {
	cfg     parsedConfig
	blank   bool
	readErr error
	err     error
}

// parallelBytes is how much configuration makes reading the layers'
// files side by side worth starting threads for: below it, one goroutine
// parses them all sooner.
var parallelBytes int64 = 64 << 10 // a variable for TestReadFilesSideBySide

// readFiles reads and parses the file of every present layer added since
// it last ran, side by side when there is enough to parse, then takes the
// results in the layers' order, so what is skipped is listed in that
// order.
func (l *loader) readFiles() {
	layers := l.layers[l.filesRead:]
	l.filesRead = len(l.layers)
	results := make([]readResult, len(layers))
	var total int64
	for _, ls := range layers {
		total += max(ls.size, 0)
	}
	if total >= parallelBytes && len(layers) > 1 {
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i, ls := range layers {
			if ls.size < 0 {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				results[i] = l.readLayerFile(ls.Path)
			}()
		}
		wg.Wait()
	} else {
		for i, ls := range layers {
			if ls.size >= 0 {
				results[i] = l.readLayerFile(ls.Path)
			}
		}
	}
	for i, ls := range layers {
		if ls.size >= 0 {
			l.takeLayer(ls, &results[i])
		}
	}
}

func (l *loader) readLayerFile(path string) (r readResult) {
	data, ok := l.overlay[path]
	if ok {
		data = bytes.Clone(data) // the parser may work in place
	} else {
		var err error
		if data, err = readConfig(path); err != nil {
			r.readErr = err
			return r
		}
	}
	r.cfg, r.blank, r.err = parseConfig(data)
	return r
}

// takeLayer records what reading a present layer's file gave.
func (l *loader) takeLayer(ls *layerState, r *readResult) {
	lay, id, path := ls.Layer, ls.ID, ls.Path
	if r.readErr != nil {
		lay.Present = true
		l.skip(Skipped{Path: path, Layer: id, Reason: "cannot read: " + errText(r.readErr), Beyond: errors.Is(r.readErr, jsonc.ErrBeyondLimits)})
		return
	}
	if r.blank {
		return
	}
	lay.Present = true
	if err := r.err; err != nil {
		s := Skipped{Path: path, Layer: id, Reason: err.Error(), Beyond: errors.Is(err, jsonc.ErrBeyondLimits)}
		var se *jsonc.SyntaxError
		if errors.As(err, &se) {
			s.Line, s.Column, s.Reason = se.Line, se.Column, "invalid JSONC: "+se.Msg
		}
		l.skip(s)
		return
	}
	cfg := &r.cfg
	for _, why := range cfg.ignored {
		l.view.Ignored = append(l.view.Ignored, Skipped{Path: path, Layer: id, Reason: why})
	}
	lay.Loaded = true
	lay.Servers = cfg.servers
	lay.Imports = cfg.imports
	lay.Settings = cfg.settings
	lay.HasClaudePlugins, lay.ClaudePlugins = cfg.hasClaudePlugins, cfg.claudePlugins
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func scopeOf(layer string) string {
	switch layer {
	case LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested:
		return ScopeGlobal
	case LayerPiGlobal:
		return ScopePiGlobal
	case LayerAncestor:
		return ScopeAncestor
	case LayerSharedProject:
		return ScopeProject
	case LayerPiProject:
		return ScopePiProject
	case LayerHost:
		return ScopeHost
	}
	return ScopePackage
}

// ancestorRoot is the adapter's getConfiguredAncestorRoot: only the global
// layers read so far may set settings.ancestorConfigRoots (the last one that
// sets it wins); each root must be absolute or ~/…, an existing directory
// under home that contains the cwd, compared by real path; the deepest wins.
func (l *loader) ancestorRoot() string {
	var configured any
	set := false
	for _, ls := range l.layers {
		if !ls.Loaded {
			continue
		}
		if r, ok := ls.Settings["ancestorConfigRoots"]; ok {
			configured, set = r, true
		}
	}
	list, ok := configured.([]any)
	if !set || !ok || len(list) == 0 {
		return ""
	}
	best := ""
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			continue
		}
		if strings.HasPrefix(s, "~/") {
			s = filepath.Join(l.home, s[2:])
		}
		if !filepath.IsAbs(s) {
			continue
		}
		l.consult(s)
		root, err := realpath(s)
		if err != nil {
			continue
		}
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() || !paths.Within(l.realHome, root) || !paths.Within(root, l.realCwd) {
			continue
		}
		if len(root) > len(best) {
			best = root
		}
	}
	return best
}

// ancestorDirs lists the directories from root down to cwd's parent.
func ancestorDirs(realCwd, root string) []string {
	var dirs []string
	current := filepath.Dir(realCwd)
	for paths.Within(root, current) {
		dirs = append([]string{current}, dirs...)
		if current == root {
			break
		}
		parent := filepath.Dir(current)
		if parent == current {
			break
		}
		current = parent
	}
	return dirs
}

// findGitRoot is the nearest directory from the real cwd up holding .git.
func (l *loader) findGitRoot() string {
	if l.gitRoot != nil {
		return *l.gitRoot
	}
	root := ""
	for dir := l.realCwd; ; {
		p := filepath.Join(dir, ".git")
		l.consult(p)
		if exists(p) {
			root = dir
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	l.gitRoot = &root
	return root
}

// mergeSettings spreads each loaded layer's settings in precedence order.
func (l *loader) mergeSettings() {
	v := l.view
	for _, ls := range l.layers {
		if !ls.Loaded || ls.Settings == nil {
			continue
		}
		for _, k := range sortedNames(ls.Settings) {
			val := ls.Settings[k]
			v.Settings[k] = val
			v.SettingOrigins[k] = append(v.SettingOrigins[k], SettingOrigin{File: ls.Path, Layer: ls.ID, Repository: ls.Repository, Value: val})
		}
	}
}

// settingWinner is the highest layer that set key.
func (l *loader) settingWinner(key string) (SettingOrigin, bool) {
	o := l.view.SettingOrigins[key]
	if len(o) == 0 {
		return SettingOrigin{}, false
	}
	return o[len(o)-1], true
}

// read reads an import kind once per Load.
func (l *loader) read(kind string) *imports.Result {
	if r, ok := l.results[kind]; ok {
		return r
	}
	res := imports.Read(kind, l.home, l.cwd)
	l.results[kind] = &res
	l.kindOrder = append(l.kindOrder, kind)
	for _, p := range res.Consulted {
		l.consult(p)
	}
	for _, c := range res.Candidates {
		l.consult(c.Path)
		if c.Status == imports.StatusUnreadable {
			l.skip(Skipped{Path: c.Path, Kind: kind, Line: c.Line, Column: c.Column, Reason: c.Err})
		}
	}
	return &res
}

// importDecl records who asked for a kind, for ImportTargets.
type importDecl struct {
	files []string
	repo  bool
}

// mergeServers builds the adapter's merge tree (loadMcpConfig): host
// discovery beneath every layer, each layer's imports beneath its own
// servers, then Agent Plugins, packages and Claude plugins beneath the
// file layers.
func (l *loader) mergeServers() {
	m := &merging{decls: map[string]*importDecl{}, union: newServerMap()}
	n := 0
	for _, ls := range l.layers {
		n += len(ls.Servers)
	}
	file := &serverMap{nodes: make(map[string]*node, n), names: make([]string, 0, n)}
	file = l.hostServers(m, file)
	file = l.layerServers(m, file)
	l.record(m, l.withPackages(file))
}

// merging is what mergeServers gathers besides the merged map: which files
// declared each import kind, and the union-only entries (servers another
// agent has that the adapter does not load).
type merging struct {
	decls map[string]*importDecl
	union *serverMap
}

func (m *merging) declare(kind, file string, repo bool) {
	d := m.decls[kind]
	if d == nil {
		d = &importDecl{}
		m.decls[kind] = d
	}
	if !containsString(d.files, file) {
		d.files = append(d.files, file)
	}
	d.repo = d.repo || repo
}

func (m *merging) addUnion(seen map[string]bool, s imports.Server, c Contribution) {
	if seen[s.Name] {
		return
	}
	seen[s.Name] = true
	m.union.set(s.Name, mergeNode(m.union.nodes[s.Name], leaf(c, 0)))
}

// hostServers merges, below every file layer, what host discovery imports
// when settings switch it on.
func (l *loader) hostServers(m *merging, file *serverMap) *serverMap {
	v := l.view
	hostOn := !v.Exclusive && v.Settings["hostConfigDiscovery"] == "on"
	if hostOn {
		origin, _ := l.settingWinner("hostConfigDiscovery")
		var results []*imports.Result
		for _, kind := range imports.Kinds {
			m.declare(kind, origin.File, origin.Repository)
			results = append(results, l.read(kind))
		}
		repoFile := ""
		for _, res := range results {
			for _, c := range res.Candidates {
				if c.InProject && c.Status != imports.StatusMissing && repoFile == "" {
					repoFile = c.Path
				}
			}
		}
		for i, res := range results {
			kind := imports.Kinds[i]
			found := newServerMap()
			seen := map[string]bool{}
			useen := map[string]bool{}
			for _, s := range res.Servers {
				c := Contribution{Layer: LayerHost, Scope: ScopeHost, File: s.File, Kind: kind, Entry: s.Entry}
				switch {
				case s.InProject:
					c.Repository, c.Reason = true, "imported by "+kind+", whose file is in the project"
				case origin.Repository:
					c.Repository, c.Reason = true, "host discovery switched on by the project's "+l.rel(origin.File)
				case repoFile != "":
					c.Repository, c.Reason = true, "host discovery is on and the repository's "+l.rel(repoFile)+" exists"
				}
				if !s.Adapter {
					m.addUnion(useen, s, c)
					continue
				}
				if seen[s.Name] || s.Name == "__proto__" {
					continue
				}
				seen[s.Name] = true
				found.set(s.Name, leaf(c, 0))
			}
			file = mergeMaps(file, found)
		}
	}

	return file
}

// layerServers merges each loaded layer in order: what it imports, then its
// own servers over them.
func (l *loader) layerServers(m *merging, file *serverMap) *serverMap {
	v := l.view
	for _, ls := range l.layers {
		if !ls.Loaded {
			continue
		}
		if ls.Imports != nil {
			v.Imports = append(v.Imports, ImportDecl{File: ls.Path, Layer: ls.ID, Kinds: append([]string{}, ls.Imports...), Repository: ls.Repository})
		}
		imported := newServerMap()
		useen := map[string]bool{}
		for _, kind := range ls.Imports {
			if protoNames[kind] {
				l.fatal(ls.Path, ls.ID, fmt.Sprintf("imports lists %q, which the adapter cannot look up", kind))
				continue
			}
			m.declare(kind, ls.Path, ls.Repository)
			res := l.read(kind)
			for _, s := range res.Servers {
				c := Contribution{Layer: ls.ID, Scope: ls.Scope, File: s.File, Kind: kind, Entry: s.Entry}
				switch {
				case s.InProject:
					c.Repository, c.Reason = true, "imported by "+kind+", whose file is in the project"
				case ls.Repository:
					c.Repository, c.Reason = true, "imported by a repository layer ("+l.rel(ls.Path)+" imports "+kind+")"
				}
				if !s.Adapter {
					m.addUnion(useen, s, c)
					continue
				}
				if imported.has(s.Name) || protoNames[s.Name] {
					continue
				}
				imported.set(s.Name, leaf(c, 0))
			}
		}
		own := &serverMap{nodes: make(map[string]*node, len(ls.Servers)), names: make([]string, 0, len(ls.Servers))}
		for _, name := range sortedNames(ls.Servers) {
			c := Contribution{Layer: ls.ID, Scope: ls.Scope, File: ls.Path, Entry: ls.Servers[name], Repository: ls.Repository, Reason: ls.reason}
			own.set(name, leaf(c, 0))
		}
		file = mergeMaps(file, mergeMaps(imported, own))
	}

	return file
}

// withPackages lays the file layers over Pi packages' and agent plugins'
// servers (unless exclusive), and Claude plugins' under everything.
func (l *loader) withPackages(file *serverMap) *serverMap {
	v := l.view
	higher := file
	if !v.Exclusive {
		plugins := l.agentPlugins()
		pkgs := l.packages()
		filtered := newServerMap()
		for _, name := range pkgs.names {
			if !plugins.has(name) {
				filtered.set(name, pkgs.nodes[name])
			}
		}
		higher = mergeMaps(filtered, mergeMaps(plugins, file))
	}
	claude := l.claudePlugins(higher)
	return mergeMaps(claude, higher)
}

// record writes the merged servers, the union-only ones and the import
// targets into the view.
func (l *loader) record(m *merging, final *serverMap) {
	v := l.view
	// By name, the adapter's entry before the union's of the same name:
	// each list is sorted (its names are distinct), then the two are
	// merged, so no server is moved once made.
	loaded, union := slices.Sorted(slices.Values(final.names)), slices.Sorted(slices.Values(m.union.names))
	v.Servers = slices.Grow(v.Servers, len(loaded)+len(union))
	for len(loaded) > 0 || len(union) > 0 {
		if len(union) == 0 || len(loaded) > 0 && loaded[0] <= union[0] {
			v.Servers = append(v.Servers, serverFrom(loaded[0], final.nodes[loaded[0]], true))
			loaded = loaded[1:]
		} else {
			v.Servers = append(v.Servers, serverFrom(union[0], m.union.nodes[union[0]], false))
			union = union[1:]
		}
	}

	for _, kind := range l.sortedKinds() {
		d := m.decls[kind]
		for _, c := range l.results[kind].Candidates {
			t := ImportTarget{Kind: kind, Path: c.Path, Status: c.Status, Adapter: c.Adapter, Error: c.Err, Line: c.Line, Column: c.Column, Repository: c.InProject}
			if d != nil {
				t.Repository = t.Repository || d.repo
				t.DeclaredBy = append([]string(nil), d.files...)
			}
			v.ImportTargets = append(v.ImportTargets, t)
		}
	}
}

// sortedKinds lists the kinds read, in imports.Kinds order, unknown last.
func (l *loader) sortedKinds() []string {
	rank := map[string]int{}
	for i, k := range imports.Kinds {
		rank[k] = i
	}
	kinds := append([]string(nil), l.kindOrder...)
	sort.SliceStable(kinds, func(i, j int) bool {
		ri, iok := rank[kinds[i]]
		rj, jok := rank[kinds[j]]
		if iok != jok {
			return iok
		}
		if !iok {
			return kinds[i] < kinds[j]
		}
		return ri < rj
	})
	return kinds
}

func serverFrom(name string, n *node, loads bool) Server {
	top := n.contribs[len(n.contribs)-1]
	s := Server{
		Name: name, Entry: n.entry, Scope: top.Scope, Layer: top.Layer,
		Source:        Source{File: top.File, Kind: top.Kind},
		Contributions: n.contribs, AdapterLoads: loads,
	}
	switch top.Layer {
	case LayerAgentPlugin, LayerPackage, LayerClaudePlugin:
		s.Source.Kind = top.Layer
	}
	for i := len(n.contribs) - 1; i >= 0; i-- {
		if c := n.contribs[i]; c.Repository {
			s.RepositoryControlled, s.RepositoryReason = true, c.Reason
			break
		}
	}
	return s
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// finish fills Layers and Consulted.
func (l *loader) finish() {
	v := l.view
	for _, ls := range l.layers {
		v.Layers = append(v.Layers, *ls.Layer)
	}
	for p := range l.consulted {
		v.Consulted = append(v.Consulted, p)
	}
	sort.Strings(v.Consulted)
}
