package catalogue

import (
	"time"

	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpcache"
)

// KeyOf is the pin key of a gate server: its approval for a repository
// server (project, name, approval digest), its whole definition for any
// other (the same in every project).
func KeyOf(g *gate.Gate, s *gate.Server) string {
	if s.Repository {
		return Key(g.Project, s.Name, s.Digest)
	}
	d, err := digest.Of(map[string]any(s.Config.Entry))
	if err != nil {
		d = "sha256:unavailable"
	}
	return Key("", s.Name, d)
}

// States compares every usable server's catalogue in the adapter's cache
// with its pin. A server seen for the first time is pinned then (when
// record is set), unless its catalogue hides content: that waits for a
// person (piagent-mcp approve NAME --tools). Servers without a cache entry
// have no state: nothing of theirs has reached the model through the cache.
func States(g *gate.Gate, mc *mcpcache.Cache, pinsPath string, record bool, now time.Time) map[string]*State {
	out := map[string]*State{}
	if mc == nil {
		return out
	}
	pins, perr := Load(pinsPath)
	for i := range g.Servers {
		s := &g.Servers[i]
		if !s.Config.AdapterLoads || gate.Blocks(s.State) {
			continue
		}
		e, ok := mc.Servers[s.Name]
		if !ok || e.Raw == nil {
			continue
		}
		seen, err := FromEntry(e.Raw)
		if err != nil {
			continue // the adapter could not use the entry either
		}
		st := &State{Seen: seen}
		out[s.Name] = st
		if perr != nil {
			st.Err = perr.Error()
			continue
		}
		key := KeyOf(g, s)
		pin, ok := pins[key]
		switch {
		case ok:
			st.Diff = Compare(pin.Catalogue, seen)
		case len(seen.Concealed) > 0:
			st.Concealed = seen.Concealed
		case record:
			if err := Record(pinsPath, key, seen, true, now); err != nil {
				st.Err = err.Error()
			}
		}
	}
	return out
}
