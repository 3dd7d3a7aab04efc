package guard

import (
	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpcache"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/toolname"
)

// Options completes a Snapshot beyond the gate.
type Options struct {
	// Cache is the adapter's metadata cache; nil when there is none.
	Cache *mcpcache.Cache
	// AdapterPath is the adapter's index.ts, when known: tools whose
	// SourcePath equals it are MCP tools whatever their name.
	AdapterPath string
	// Protected lists extra folders no tool call may write (the extension's
	// own files); Binaries are piagent's executables. Both join the
	// registry (package registry) of everything that decides what runs.
	Protected []string
	Binaries  []string
	// Registry, when set, is g.Registry(Binaries, Protected) already
	// computed by the caller.
	Registry []registry.Entry
	// RegistrySet, when set, is Registry already indexed (a caller that
	// builds snapshots of one registry again and again keeps it).
	RegistrySet *registry.Set
	// Resolve returns the real path of p (symlinks followed) when it exists;
	// nil leaves paths as written. It is the one piece of IO Decide may use,
	// supplied by the caller.
	Resolve func(p string) string
	// Policy is the tool policy; nil checks MCP approval and the gate's
	// self-protection only. Facts is what the policy knows of the world.
	Policy *policy.Policy
	Facts  policy.Facts
	// Catalogues are the servers' catalogues against their pins (package
	// catalogue), by server name; a server without one is not checked.
	Catalogues map[string]*catalogue.State
}

// Snapshot is everything Decide reads, precomputed from one gate state.
type Snapshot struct {
	g       *gate.Gate
	opts    Options
	byName  map[string]*gate.Server // servers the adapter loads, enabled or not
	reverse []toolname.Server       // enabled servers, for reverse naming
	names   []string                // configured names, for namespace reversal
	direct  bool                    // some server has direct tools
	script  *gate.Server            // the first enabled server that is not approved, for mcpScript
	reg     *registry.Set           // what no call may write: the registry
	guarded policy.Guarded          // the registry, for the self-protection
	cwd     string
	home    string
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
	if s.reg = o.RegistrySet; s.reg == nil {
		reg := o.Registry
		if reg == nil {
			reg = g.Registry(o.Binaries, o.Protected)
		}
		s.reg = registry.NewSet(reg)
	}
	s.guarded = policy.Guarded{Reg: s.reg, Home: s.home, Cwd: s.cwd, Resolve: o.Resolve}
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
