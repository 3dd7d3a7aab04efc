package gate

import (
	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
	"os"
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
func (g *Gate) afterEdits(w *fswatch.Watch, names []string) (*Gate, bool) {
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
			// beside what the gate read, unless it is a second name of a
			// file: a write through it is an event on this name alone,
			// and the file may be one the gate read. In the project a
			// name gone may have been one (made, written through and
			// removed in one command); outside it, in the folders above
			// (a home, /tmp), files come and go all day and the agent
			// cannot write there.
			if !paths.Within(g.View.Cwd, p) {
				return !fswatch.Linked(p)
			}
			return !w.HardLinked([]string{p})
		}
		st := stampOf(p)
		if st == g.Signature[i] {
			return true
		}
		if !g.editable(p) || w.HardLinked([]string{p}) {
			return false // another name of it is pinned stale otherwise
		}
		if changed == nil {
			changed = map[string]bool{}
		}
		changed[p] = true
		restamped = append(restamped, st)
		return true
	}
	entries := w.Entries()
	for _, n := range names {
		// The name and its folder: a file created, removed or renamed in
		// a folder the gate read changes the folder's stamp (an edit of a
		// file's content or attributes does not).
		if !look(n) || entries && !look(filepath.Dir(n)) {
			return nil, false
		}
	}
	if len(changed) == 0 {
		return g, true
	}
	// The signature moves to the new gate, updated where it is (the cache
	// alone reads it, and only the newest gate's).
	sig := g.Signature
	for _, st := range restamped {
		sig[g.index[st.path]] = st
	}
	in := *g.input
	in.reuse = make(map[*mcpconfig.Server][]PinnedFile, len(g.Servers))
	in.prev = make(map[*mcpconfig.Server]*Server, len(g.Servers))
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.Pinned != nil {
			in.reuse[s.Config] = s.Pinned
		}
		in.prev[s.Config] = s
	}
	in.changed = changed
	in.stamps = make(map[string]safefile.Stamp, len(restamped))
	for _, st := range restamped {
		in.stamps[st.path] = st.Stamp
	}
	refreshes.Add(1)
	out := Compute(in)
	out.TreePins, out.Signature, out.input, out.index, out.ways = g.TreePins, sig, g.input, g.index, g.ways
	out.id, out.from = ids.Add(1), g.id
	return out, true
}

// refreshes counts the gates afterEdits computed, compared the servers
// refreshed compared file by file (tests).
var refreshes, compared atomic.Int64

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
	// a file the configuration reader read (a plugin's mcp.json or
	// plugin.json, a layer's target): its content can change definitions
	if _, ok := slices.BinarySearch(g.View.Consulted, p); ok {
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

// refreshed is prev judged again after the edits in in.changed, without
// looking at anything else: prev itself when no changed file is one it
// pins; when its approval was compared file by file (prev.pins), a copy
// with the changed files digested and compared again. ok is false where
// only a full judgement can tell (a changed file now too large or
// unreadable, which no approval can cover).
func (in *Input) refreshed(prev *Server) (Server, bool) {
	var idx []int
	abs := map[int]string{}
	for p := range in.changed {
		rel, err := filepath.Rel(in.View.Cwd, p)
		if err != nil {
			return Server{}, false
		}
		if i := pinnedAt(prev.Pinned, filepath.ToSlash(rel)); i >= 0 {
			idx, abs[i] = append(idx, i), p
		}
	}
	if len(idx) == 0 {
		return *prev, true
	}
	if !prev.pins.made {
		return Server{}, false
	}
	compared.Add(1)
	// The list is updated where it is, not copied: a copy of a 10,000-file
	// pin cost about 0.8 ms here, most of a decision after an edit. The
	// gate refreshed is the cache's and is replaced by this one (see
	// Cache.Get). Recorded is kept: the record is the same.
	s := *prev
	slices.Sort(idx)
	for _, i := range idx {
		d := in.editedDigest(abs[i])
		if d == fileTooLarge || d == fileUnreadable {
			return Server{}, false
		}
		s.Pinned[i].Digest = d
	}
	// the changed files: those before, less the ones digested again, and
	// those of them that differ now
	ch := make([]int, 0, len(prev.pins.changed)+len(idx))
	for _, i := range prev.pins.changed {
		if _, again := slices.BinarySearch(idx, i); !again {
			ch = append(ch, i)
		}
	}
	for _, i := range idx {
		if s.Pinned[i].Changed() {
			ch = append(ch, i)
		}
	}
	slices.Sort(ch)
	s.pins.changed = slices.Compact(ch)
	s.State, s.Reason, s.Fix, s.Command, s.MissingEnv = "", "", Fix{}, "", nil
	if st, reason, fix, _ := in.pinVerdict(&s); st != "" {
		s.State, s.Reason, s.Fix = st, reason, fix
		return s, true
	}
	return in.usable(s), true
}

// editedDigest is fileDigest of a file just edited. Its new stamp, taken
// by afterEdits, holds its content's SHA-256 while its times are recent
// (safefile.RacyWindow), which is the digest itself: used when the file is
// still that regular file (no link, the same inode, size and times), it
// spares a second read of the content.
func (in *Input) editedDigest(p string) string {
	st, ok := in.stamps[p]
	if !ok || !st.Mode.IsRegular() || !st.Hashed() {
		return fileDigest(p)
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return fileDigest(p)
	}
	now := safefile.FromInfo(fi)
	now.Sum = st.Sum
	if now != st {
		return fileDigest(p)
	}
	return digest.Sum(st.Sum)
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
