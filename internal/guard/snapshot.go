package guard

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/toolname"
)

// Options completes a Snapshot beyond the gate.
type Options struct {
	// Cache is the adapter's metadata cache; nil when there is none.
	Cache *mcpcache.Cache
	// AdapterPath is the adapter's index.ts, when known: tools whose
	// SourcePath equals it are MCP tools whatever their name.
	AdapterPath string
	// Protected lists extra files and folders no tool call may write (the
	// launcher's generated config, the extension's own files).
	Protected []string
	// Resolve returns the real path of p (symlinks followed) when it exists;
	// nil leaves paths as written. It is the one piece of IO Decide may use,
	// supplied by the caller.
	Resolve func(p string) string
	// Policy is the tool policy; nil checks MCP approval and the gate's
	// self-protection only. Facts is what the policy knows of the world.
	Policy *policy.Policy
	Facts  policy.Facts
}

// Snapshot is everything Decide reads, precomputed from one gate state.
type Snapshot struct {
	g        *gate.Gate
	opts     Options
	byName   map[string]*gate.Server // servers the adapter loads, enabled or not
	reverse  []toolname.Server       // enabled servers, for reverse naming
	names    []string                // configured names, for namespace reversal
	direct   bool                    // some server has direct tools
	script   *gate.Server            // the first enabled server that is not approved, for mcpScript
	protect  []string                // clean absolute files no call may write
	lower    map[string]string       // the same, lower-cased, for case-folding file systems
	dirs     []string                // folders no call may write into
	cwd      string
	home     string
	mcpLabel string
}

// NewSnapshot precomputes a gate state for Decide.
func NewSnapshot(g *gate.Gate, o Options) *Snapshot {
	s := &Snapshot{g: g, opts: o, byName: map[string]*gate.Server{}, cwd: g.View.Cwd, home: g.View.Home}
	for i := range g.Servers {
		srv := &g.Servers[i]
		if !srv.Config.AdapterLoads {
			continue
		}
		if _, dup := s.byName[srv.Name]; dup {
			continue
		}
		s.byName[srv.Name] = srv
		s.names = append(s.names, srv.Name)
		if srv.State == gate.Disabled {
			continue
		}
		ts := toolname.Server{Name: srv.Name, Mode: srv.Prefix, DirectTools: srv.DirectTools}
		if o.Cache != nil {
			if e, ok := o.Cache.Servers[srv.Name]; ok && e.Err == nil {
				ts.Tools = e.ToolNames()
				if ts.Tools == nil {
					ts.Tools = []string{}
				}
				if exp, _ := srv.Config.Entry["exposeResources"].(bool); exp || srv.Config.Entry["exposeResources"] == nil {
					ts.Resources = e.ResourceNames()
				}
			}
		}
		s.reverse = append(s.reverse, ts)
		s.direct = s.direct || srv.DirectTools
		if s.script == nil && gate.Blocks(srv.State) {
			s.script = srv
		}
	}
	s.protect, s.dirs = protectedPaths(g, o)
	s.lower = make(map[string]string, len(s.protect))
	for _, p := range s.protect {
		s.lower[strings.ToLower(p)] = p
	}
	return s
}

// Facts is what the policy knows of the world for this snapshot.
func (s *Snapshot) Facts() policy.Facts { return s.opts.Facts }

// Policy is the tool policy; never nil (the embedded base policy when none
// was given).
func (s *Snapshot) Policy() *policy.Policy {
	if s.opts.Policy == nil {
		p, _ := policy.Merge(policy.Input{}, policy.Input{})
		return p
	}
	return s.opts.Policy
}

// Gate is the state the snapshot was built from.
func (s *Snapshot) Gate() *gate.Gate { return s.g }

// protectedPaths lists what the gate guards against writes: the approval
// store, every MCP config layer (present or not), every import kind's files,
// Pi's settings.json in the agent dir and the project, the metadata cache,
// the policy files and the caller's extra paths.
func protectedPaths(g *gate.Gate, o Options) (files, dirs []string) {
	v := g.View
	add := func(p string) {
		if p != "" {
			files = append(files, filepath.Clean(p))
		}
	}
	store := paths.ApprovalStore(v.Home)
	add(store)
	add(store + ".lock")
	for _, l := range v.Layers {
		add(l.Path)
	}
	for _, t := range v.ImportTargets {
		add(t.Path)
	}
	for _, p := range v.Consulted {
		// Every file the readers consult decides what runs: layers, import
		// candidates, settings.json, package manifests.
		add(p)
	}
	add(filepath.Join(v.AgentDir, "settings.json"))
	add(filepath.Join(v.AgentDir, "mcp.json"))
	add(filepath.Join(v.AgentDir, "mcp-cache.json"))
	add(filepath.Join(v.Cwd, v.ConfigDir, "settings.json"))
	add(filepath.Join(v.Cwd, v.ConfigDir, "mcp.json"))
	add(filepath.Join(v.Cwd, ".mcp.json"))
	add(filepath.Join(v.Home, ".pi", "piagent-policy.json"))
	add(filepath.Join(v.Cwd, v.ConfigDir, "piagent-policy.json"))
	dirs = append(dirs, filepath.Join(v.Home, ".pi", "piagent"))
	for _, p := range o.Protected {
		dirs = append(dirs, filepath.Clean(p))
	}
	slices.Sort(files)
	return slices.Compact(files), dirs
}

// isProtected reports whether writing p (as a tool wrote it: relative to the
// cwd, with ~) would touch a guarded file. Both the literal and the resolved
// form are checked, case-insensitively for the base name's sake on
// case-folding file systems.
func (s *Snapshot) isProtected(p string) (string, bool) {
	// Every guarded path has a slash, a dot or starts with ~; a bare word
	// cannot name one, and most tool arguments are bare words.
	if p == "" || !strings.ContainsAny(p, "./~") {
		return "", false
	}
	p = strings.TrimPrefix(p, "file://")
	p = paths.Expand(s.home, p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	p = filepath.Clean(p)
	if f, ok := s.match(p); ok {
		return f, true
	}
	if s.opts.Resolve != nil {
		if r := s.opts.Resolve(p); r != "" && r != p {
			return s.match(r)
		}
	}
	return "", false
}

func (s *Snapshot) match(p string) (string, bool) {
	if _, ok := slices.BinarySearch(s.protect, p); ok {
		return p, true
	}
	if f, ok := s.lower[strings.ToLower(p)]; ok {
		return f, true
	}
	for _, d := range s.dirs {
		if p == d || strings.HasPrefix(p, d) && len(p) > len(d) && p[len(d)] == filepath.Separator {
			return p, true
		}
	}
	return "", false
}
