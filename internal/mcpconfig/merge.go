package mcpconfig

// Keys a higher entry's transport removes from the entry beneath it.
var (
	// commandDrops: a higher `command` drops the lower HTTP and socket keys.
	commandDrops = []string{
		"url", "headers", "requestHeadersCommand", "caFile", "auth", "bearerToken",
		"bearerTokenEnv", "bearerTokenStore", "oauth", "httpTransport", "socket",
	}
	// urlDrops: a higher `url` drops the lower process and socket keys.
	urlDrops = []string{"command", "args", "env", "cwd", "pluginDataDir", "literalEnv", "inheritEnv", "socket"}
	// socketDrops: a higher `socket` drops both groups.
	socketDrops = []string{
		"command", "args", "env", "cwd", "pluginDataDir", "literalEnv", "inheritEnv", "url",
		"headers", "requestHeadersCommand", "caFile", "auth", "bearerToken", "bearerTokenEnv",
		"bearerTokenStore", "oauth", "httpTransport",
	}
	// urlBoundDrops: credentials bound to a URL, dropped when the URL changes.
	// oauth goes too unless it is literally false.
	urlBoundDrops = []string{"headers", "bearerToken", "bearerTokenEnv", "bearerTokenStore", "requestHeadersCommand", "caFile"}
)

// keySet is a set of the keys a merge may drop, a bit each (dropBits): a
// merge with a lower entry once made a map of them.
type keySet uint32

// dropBits numbers every key in the lists above, and oauth and literalEnv.
var dropBits = func() map[string]keySet {
	m := map[string]keySet{}
	for _, list := range [][]string{commandDrops, urlDrops, socketDrops, urlBoundDrops, {"oauth", "literalEnv"}} {
		for _, k := range list {
			if _, ok := m[k]; !ok {
				m[k] = 1 << len(m)
			}
		}
	}
	if len(m) > 32 {
		panic("mcpconfig: more keys a merge drops than a keySet holds")
	}
	return m
}()

var (
	commandDropSet  = keySetOf(commandDrops)
	urlDropSet      = keySetOf(urlDrops)
	socketDropSet   = keySetOf(socketDrops)
	urlBoundDropSet = keySetOf(urlBoundDrops)
)

func keySetOf(keys []string) keySet {
	var s keySet
	for _, k := range keys {
		s |= dropBits[k]
	}
	return s
}

// has reports whether k is in s; a key no list names never is.
func (s keySet) has(k string) bool { return s != 0 && s&dropBits[k] != 0 }

// Agent Plugin fields the adapter keeps literal (it marks them on the
// translated entry); the mark travels with the field through merges.
const (
	litArgs uint8 = 1 << iota
	litEnv
	litCwd
	litHeaders
)

var literalFields = [...]struct {
	key  string
	mark uint8
}{{"args", litArgs}, {"env", litEnv}, {"cwd", litCwd}, {"headers", litHeaders}}

// MergeEntry lays next over base the way the adapter merges two definitions
// of one server: shallow, key by key, after removing the inherited keys a
// higher command, url or socket displaces, and the URL-bound credentials when
// the url changes. A nil base means no lower definition, and next itself is
// returned. Neither input is modified; nested values are shared, not copied,
// and so is next when there is no base: entries are read, never changed,
// once loaded.
func MergeEntry(base, next Entry) Entry {
	e, _ := mergeMarked(base, 0, base != nil, next, 0)
	return e
}

// mergeMarked is MergeEntry carrying the Agent Plugin literal-field marks of
// both sides. hasBase distinguishes "no lower entry" from an empty one.
func mergeMarked(base Entry, baseLit uint8, hasBase bool, next Entry, nextLit uint8) (Entry, uint8) {
	if !hasBase {
		out := next // shared: loaded entries are never changed
		if nextLit == 0 {
			return out, 0 // no literal field to carry (most entries)
		}
		lit := uint8(0)
		for _, f := range literalFields {
			if _, ok := next[f.key]; ok && nextLit&f.mark != 0 {
				lit |= f.mark
			}
		}
		return out, lit
	}
	var drop keySet
	if _, ok := next["command"].(string); ok {
		drop = commandDropSet
	} else if _, ok := next["url"].(string); ok {
		drop = urlDropSet
	} else if _, ok := next["socket"].(string); ok {
		drop = socketDropSet
	}
	if nu, ok := next["url"].(string); ok {
		if bu, same := base["url"].(string); !same || bu != nu {
			drop |= urlBoundDropSet
			if o, ok := base["oauth"].(bool); !ok || o {
				drop |= dropBits["oauth"]
			}
		}
	}
	if _, ok := next["env"]; ok && baseLit&litEnv != 0 {
		if _, ok := base["env"]; ok {
			if _, ok := next["literalEnv"]; !ok {
				drop |= dropBits["literalEnv"]
			}
		}
	}
	out := make(Entry, len(base)+len(next))
	for k, v := range base {
		if !drop.has(k) {
			out[k] = v
		}
	}
	for k, v := range next {
		out[k] = v
	}
	lit := uint8(0)
	for _, f := range literalFields {
		if _, ok := next[f.key]; ok {
			if nextLit&f.mark != 0 {
				lit |= f.mark
			}
			continue
		}
		if _, ok := base[f.key]; ok && !drop.has(f.key) && baseLit&f.mark != 0 {
			lit |= f.mark
		}
	}
	return out, lit
}

// node is one server's definition while the adapter's merge tree is built:
// the merged entry, its literal-field marks and the fragments it came from.
type node struct {
	entry    Entry
	lit      uint8
	contribs []Contribution
}

// leafNode is a leaf's node with its one contribution beside it: one
// allocation a server, not two.
type leafNode struct {
	node
	one [1]Contribution
}

func leaf(c Contribution, lit uint8) *node {
	n := &leafNode{node: node{entry: c.Entry, lit: lit}, one: [1]Contribution{c}}
	n.contribs = n.one[:]
	return &n.node
}

func mergeNode(base, next *node) *node {
	if base == nil {
		e, lit := mergeMarked(nil, 0, false, next.entry, next.lit)
		if lit == next.lit {
			return next // nodes are not changed once built
		}
		return &node{entry: e, lit: lit, contribs: next.contribs}
	}
	e, lit := mergeMarked(base.entry, base.lit, true, next.entry, next.lit)
	cs := make([]Contribution, 0, len(base.contribs)+len(next.contribs))
	cs = append(append(cs, base.contribs...), next.contribs...)
	return &node{entry: e, lit: lit, contribs: cs}
}

// serverMap keeps names in a deterministic order (the order they were added).
type serverMap struct {
	names []string
	nodes map[string]*node
}

func newServerMap() *serverMap { return &serverMap{nodes: map[string]*node{}} }

func (m *serverMap) set(name string, n *node) {
	if _, ok := m.nodes[name]; !ok {
		m.names = append(m.names, name)
	}
	m.nodes[name] = n
}

func (m *serverMap) has(name string) bool { _, ok := m.nodes[name]; return ok }

// mergeMaps is the adapter's mergeServerMaps: every server of next is laid
// over the same-named server of base.
//
// base is merged into in place and returned: every caller lets go of it
// (a layer's map is merged once), and copying the accumulated map once
// per layer cost a third of a large configuration's load.
func mergeMaps(base, next *serverMap) *serverMap {
	if len(base.names) == 0 && cap(base.names) == 0 {
		// Nothing beneath, and no room made for more (mergeServers makes
		// its file map at the size of every layer): next itself is the
		// answer, each node merged onto nothing, rather than a copy grown
		// entry by entry.
		for _, name := range next.names {
			n := next.nodes[name]
			if m := mergeNode(nil, n); m != n {
				next.nodes[name] = m
			}
		}
		return next
	}
	for _, name := range next.names {
		base.set(name, mergeNode(base.nodes[name], next.nodes[name]))
	}
	return base
}
