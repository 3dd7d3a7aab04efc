package catalogue

import (
	"encoding/json"
	"time"

	"github.com/piagent/piagent/internal/atomicfile"
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
// record is set), whatever it offers; content it hides stays stopped until
// a person accepts it (piagent-mcp approve NAME --tools). Servers without a cache entry
// have no state: nothing of theirs has reached the model through the cache.
func States(g *gate.Gate, mc *mcpcache.Cache, belongs func(*gate.Server, mcpcache.ServerEntry) bool, pinsPath string, record, ask bool, now time.Time) map[string]*State {
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
		if !ok || !belongs(s, e) {
			continue
		}
		seen, err := FromEntry(e.Raw)
		if err != nil {
			continue // the adapter could not use the entry either
		}
		out[s.Name] = against(seen, pins, perr, pinsPath, KeyOf(g, s), record, false, ask, now)
	}
	return out
}

// Belongs reports whether entry e of the adapter's cache was written for
// one of defs, the definitions the adapter may hold for the server (the
// merged one, and the one a `piagent pi` session hands it, wrapped in the
// sandbox): its configHash is the one the adapter computes for it
// (mcpcache.ConfigHash, lookup the environment Pi runs in). Pins stay keyed
// by the approval; the hash decides only whether the entry is this
// definition's catalogue. Another project's server of the same name, or
// this one before an edit, left an entry the adapter does not use: it is
// never pinned nor compared (issue 39, item 3).
func Belongs(e mcpcache.ServerEntry, defs []map[string]any, lookup func(string) (string, bool), home string) bool {
	if e.Raw == nil {
		return false
	}
	for _, d := range defs {
		if h, ok := mcpcache.ConfigHash(d, lookup, home); ok && h == e.ConfigHash {
			return true
		}
	}
	return false
}

// ReportedTool is one tool as Pi lists it (pi.getAllTools()): the name the
// model sees, and what it is told.
type ReportedTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters,omitempty"`
	Annotations any    `json:"annotations,omitempty"`
}

// FromReport groups tools Pi's built-in MCP client registered (names
// mcp__SERVER__TOOL) by the one server each belongs to, as catalogues of
// the same shape as the adapter's cache entries, keyed by Pi's names. A
// name that could belong to more than one server, or to none, is left out:
// its calls are decided without a pin (and blocked when no server owns it).
func FromReport(tools []ReportedTool, servers []string, owners func(name string, servers []string) []string) map[string]Catalogue {
	entries := map[string][]map[string]any{}
	for _, t := range tools {
		o := owners(t.Name, servers)
		if len(o) != 1 {
			continue
		}
		m := map[string]any{"name": t.Name}
		if t.Description != "" {
			m["description"] = t.Description
		}
		if t.Parameters != nil {
			m["inputSchema"] = t.Parameters
		}
		if t.Annotations != nil {
			m["annotations"] = t.Annotations
		}
		entries[o[0]] = append(entries[o[0]], m)
	}
	out := map[string]Catalogue{}
	for server, ts := range entries {
		list := make([]any, len(ts))
		for i, t := range ts {
			list[i] = t
		}
		raw, err := json.Marshal(map[string]any{"tools": list})
		if err != nil {
			continue
		}
		if c, err := FromEntry(raw); err == nil {
			out[server] = c
		}
	}
	return out
}

// SeenSuffix marks the last changed catalogue Pi reported for a server: not
// a pin, what a person accepts with approve --tools.
const SeenSuffix = "\x00seen"

// ReportedKey is the pin key of what Pi reported for a server: apart from
// the cache's, since the names and shapes differ.
func ReportedKey(g *gate.Gate, s *gate.Server) string { return KeyOf(g, s) + "\x00pi" }

// StatesFromReport compares reported catalogues with their pins, pinning a
// first sight, as States does for the adapter's cache.
func StatesFromReport(g *gate.Gate, reported map[string]Catalogue, pinsPath string, ask bool, now time.Time) map[string]*State {
	out := map[string]*State{}
	pins, perr := Load(pinsPath)
	for i := range g.Servers {
		s := &g.Servers[i]
		seen, ok := reported[s.Name]
		if !ok || gate.Blocks(s.State) {
			continue
		}
		out[s.Name] = against(seen, pins, perr, pinsPath, ReportedKey(g, s), true, true, ask, now)
	}
	return out
}

// against is one catalogue's state against the pin under key: a diff, or
// concealed content waiting for a person, or (record) a first sight pinned
// now. keepSeen records a changed catalogue as well, for approve --tools
// to accept (what Pi reports exists nowhere else). ask: the person's policy
// says "firstSight": "ask".
func against(seen Catalogue, pins map[string]Pin, perr error, pinsPath, key string, record, keepSeen, ask bool, now time.Time) *State {
	st := &State{Seen: seen}
	if perr != nil {
		st.Err = perr.Error()
		return st
	}
	pin, ok := pins[key]
	switch {
	case ok:
		st.Diff = Compare(pin.Catalogue, seen)
		if keepSeen && !st.Diff.Empty() {
			if err := recordPin(pinsPath, key+SeenSuffix, seen, false, now, atomicfile.LockOptions{Wait: decideWait}); err != nil {
				st.Err = err.Error()
			}
		}
	case record:
		// A catalogue that hides content is pinned like any other: a decoy
		// tool must not leave its siblings unpinned, free to change later
		// (issue 39, item 2).
		if err := recordPin(pinsPath, key, seen, true, now, atomicfile.LockOptions{Wait: decideWait}); err != nil {
			st.Err = err.Error()
		} else {
			st.FirstSight = true
		}
	default:
		st.Unpinned = true
	}
	// Concealed content stays stopped until a person accepts it (a pin by
	// "person", from approve --tools); a first-sight pin is no acceptance.
	if len(seen.Concealed) > 0 && (!ok || pin.By != "person") {
		st.Concealed = seen.Concealed
	}
	// With "firstSight": "ask" a first-sight pin is no acceptance either:
	// the catalogue waits until a person has looked (issue 39, item 4).
	st.Unseen = ask && (!ok || pin.By != "person")
	return st
}
