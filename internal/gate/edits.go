package gate

import (
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/piagent/piagent/internal/mcpconfig"
)

// afterEdits answers a cached gate's check when the watch names what
// changed and nothing changed shape: every named path the gate read is
// stamped again, and when each that changed is a pinned file whose content
// decides nothing but its own digest, the gate is refreshed by digesting
// those files alone; the servers' lists of pinned files, the view and the
// store are kept. ok is false when the caller must check the slow way: a
// configuration file, the store, a folder (a file came or went), or a file
// whose content may change what is pinned (a package.json, a Makefile, a
// file a definition names) changed.
func (g *Gate) afterEdits(names []string) (*Gate, bool) {
	if g.input == nil {
		return nil, false
	}
	if g.index == nil {
		g.index = make(map[string]int, len(g.Signature))
		for i, st := range g.Signature {
			g.index[st.path] = i
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var changed map[string]bool
	var restamped []stamp
	look := func(p string) bool {
		i, ok := g.index[p]
		if !ok {
			return true // beside what the gate read
		}
		st := stampOf(p)
		if st == g.Signature[i] {
			return true
		}
		if !g.editable(p) {
			return false
		}
		if changed == nil {
			changed = map[string]bool{}
		}
		changed[p] = true
		restamped = append(restamped, st)
		return true
	}
	for _, n := range names {
		// The name and its folder: a file created, removed or renamed in
		// a folder the gate read changes the folder's stamp.
		if !look(n) || !look(filepath.Dir(n)) {
			return nil, false
		}
	}
	if len(changed) == 0 {
		return g, true
	}
	sig := slices.Clone(g.Signature)
	for _, st := range restamped {
		sig[g.index[st.path]] = st
	}
	in := *g.input
	in.reuse = make(map[*mcpconfig.Server][]PinnedFile, len(g.Servers))
	for i := range g.Servers {
		if s := &g.Servers[i]; s.Pinned != nil {
			in.reuse[s.Config] = s.Pinned
		}
	}
	in.changed = changed
	refreshes.Add(1)
	out := Compute(in)
	out.TreePins, out.Signature, out.input, out.index = g.TreePins, sig, g.input, g.index
	return out, true
}

// refreshes counts the gates afterEdits computed (tests).
var refreshes atomic.Int64

// setNames are the files whose content can change which files a
// definition pins (a runner's script line, a package's bin or main).
var setNames = map[string]bool{
	"GNUmakefile": true, "makefile": true, "Makefile": true, "justfile": true, "Justfile": true, ".justfile": true,
	"Taskfile.yml": true, "Taskfile.yaml": true, "taskfile.yml": true,
}

// editable reports whether p is a file some server pins whose content
// decides nothing but its digest.
func (g *Gate) editable(p string) bool {
	base := filepath.Base(p)
	if setNames[base] || slices.Contains(manifests, base) || slices.Contains(lockfiles, base) {
		return false
	}
	rel, err := filepath.Rel(g.View.Cwd, p)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	pinned := false
	for i := range g.Servers {
		s := &g.Servers[i]
		pinned = pinned || pinnedAt(s.Pinned, rel) >= 0
		if names(s.Config, base) {
			return false // a definition names it (make -f, a runner's file)
		}
	}
	return pinned
}

// names reports whether a server's definition mentions a file called
// base: its command, an argument, or a flag's value.
func names(cs *mcpconfig.Server, base string) bool {
	if cs == nil {
		return false
	}
	match := func(v any) bool {
		s, ok := v.(string)
		if !ok || s == "" {
			return false
		}
		if _, val, ok := strings.Cut(s, "="); ok && filepath.Base(val) == base {
			return true // --file=build.mk
		}
		return filepath.Base(s) == base
	}
	if match(cs.Entry["command"]) || match(cs.Entry["cwd"]) {
		return true
	}
	args, _ := cs.Entry["args"].([]any)
	return slices.ContainsFunc(args, match)
}

// repin is a server's pinned files as before, the changed ones digested
// again.
func (in *Input) repin(prev []PinnedFile) []PinnedFile {
	out := slices.Clone(prev)
	for i := range out {
		out[i].Recorded = ""
	}
	for p := range in.changed {
		rel, err := filepath.Rel(in.View.Cwd, p)
		if err != nil {
			continue
		}
		if i := pinnedAt(out, filepath.ToSlash(rel)); i >= 0 {
			out[i].Digest = fileDigest(p)
		}
	}
	return out
}

// pinnedAt is the index of rel in a server's pinned files, or -1: the
// list is sorted by path (pinned sorts it so).
func pinnedAt(list []PinnedFile, rel string) int {
	if i, ok := slices.BinarySearchFunc(list, rel, byPath); ok {
		return i
	}
	return -1
}

func byPath(f PinnedFile, rel string) int { return strings.Compare(f.Path, rel) }
