package gate

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/preset"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// Options says which gate to load.
type Options struct {
	Home       string
	Cwd        string
	Getenv     func(string) string
	ConfigPath string // --mcp-config
	// Extra paths whose change should invalidate a cached gate (the guard adds
	// the adapter's metadata cache).
	Extra []string
	// Overlay is mcpconfig.Options.Overlay: layer files as they are about
	// to be written.
	Overlay map[string][]byte
}

// osFS is the real file system.
type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (osFS) ReadFile(name string) ([]byte, error) {
	return safefile.Read(name, safefile.Options{Max: maxPinnedFile})
}

// OSFS is the file system of this machine.
var OSFS FS = osFS{}

// Load reads the configuration and the approval store and computes the gate.
// Its error is for a configuration that cannot be read at all (a missing
// home); everything else is reported inside the Gate. The gate has no
// Signature: a one-shot command does not look again (Cache.Get's gates
// have one).
func Load(o Options) (*Gate, error) { return load(o, false) }

func load(o Options, sign bool) (*Gate, error) {
	// before any file is read: a stamp changed since is of content the
	// gate may not have read (poisonSince)
	start := time.Now()
	view, err := mcpconfig.Load(mcpconfig.Options{Home: o.Home, Cwd: o.Cwd, Getenv: o.Getenv, ConfigPath: o.ConfigPath, Overlay: o.Overlay})
	if err != nil {
		return nil, err
	}
	project, err := approval.ProjectKey(o.Cwd)
	if err != nil {
		return nil, err
	}
	storePath := registry.ApprovalStore(o.Home)
	data, storeErr := approval.Open(storePath).Load()
	if storeErr != nil {
		data = nil
	}
	in := Input{
		View:     view,
		Store:    data,
		StoreErr: storeErr,
		Project:  project,
		Getenv:   o.Getenv,
		Optional: preset.OptionalVars,
		newFS:    func(servers int) FS { return newSnapFS(servers) },
	}
	g := Compute(in)
	if !sign {
		return g, nil
	}
	g.input = &in
	// The store's folder too: a change of its owner or mode (StrictModes)
	// changes whether the store counts.
	watched := append(slices.Clone(view.Consulted), storePath, filepath.Dir(storePath))
	watched = append(watched, g.PinnedPaths()...)
	// every path judging the servers asked about, missing ones included:
	// a node_modules made above a server's package, a manifest that moves
	// its package, a command installed on PATH change the answer
	watched = append(watched, g.consulted...)
	gitDir := filepath.Join(view.Cwd, ".git")
	for _, t := range g.TreePins {
		_ = filepath.WalkDir(t, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				if p == gitDir {
					return filepath.SkipDir // the baseline watches it
				}
				watched = append(watched, p) // a new or removed entry changes its folder
			}
			return nil
		})
	}
	watched = append(watched, o.Extra...)
	if afterRead != nil {
		afterRead()
	}
	g.Signature = Sign(watched)
	g.Signature.poisonSince(start)
	return g, nil
}

// marked reports whether a stamp holds poisonSince's mark.
func (s Signature) marked() bool {
	for _, st := range s {
		if st.Exists && st.Unread() {
			return true
		}
	}
	return false
}

// afterRead, when set, runs between a load's reading and its stamping
// (tests: a write in that window).
var afterRead func()

// clockTick bounds how far a file's change time may lag the clock: the
// kernel stamps files from a clock read at each tick (a jiffy, up to 10
// ms), so a write after t has a change time after t-clockTick.
const clockTick = 20 * time.Millisecond

// poisonSince marks every stamp whose path changed after t-clockTick as
// unlike any later stamp of it. A load reads its files, then stamps them:
// a write in between left the new stamp beside the old content, and every
// later check (the watch saw nothing, the stamps were equal) kept the gate
// judged on what was no longer there — a changed definition allowed as
// approved. Get loads again when a stamp is marked (a file written in the
// 20 ms before a load costs that load a pause and a second reading).
// A file system whose times are coarser than that (FAT's two seconds) can
// stamp a write after the load began as older: there the mark is not
// certain, and the 5 s re-check compares stamps, not content.
func (s Signature) poisonSince(t time.Time) {
	since := t.Add(-clockTick).UnixNano()
	for i := range s {
		if s[i].Exists && s[i].Ctime >= since {
			s[i].MarkUnread()
		}
	}
}

// stamp is what one path looked like (safefile.Stamp: absence, size,
// inode, modification and change times, and the content while those are
// too recent to tell writes apart).
type stamp struct {
	path string
	safefile.Stamp
}

// Signature is the state of every path a gate read, present or missing.
type Signature []stamp

func stampOf(p string) stamp {
	return stamp{path: p, Stamp: safefile.StampOf(p)}
}

// Sign stats every path.
func Sign(pathList []string) Signature {
	slices.Sort(pathList)
	pathList = slices.Compact(pathList)
	sig := make(Signature, len(pathList))
	for i, p := range pathList {
		sig[i] = stampOf(p)
	}
	return sig
}

// Valid reports whether every path still looks as it did: about one stat per
// path. A long signature (a whole-tree pin) is checked by every CPU at once.
func (s Signature) Valid() bool {
	const chunk = 1024
	if len(s) <= chunk || runtime.GOMAXPROCS(0) == 1 {
		return s.valid()
	}
	workers := min(runtime.GOMAXPROCS(0), (len(s)+chunk-1)/chunk)
	var bad atomic.Bool
	var wg sync.WaitGroup
	per := (len(s) + workers - 1) / workers
	for i := 0; i < len(s); i += per {
		part := s[i:min(i+per, len(s))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < len(part) && !bad.Load(); j++ {
				if stampOf(part[j].path) != part[j] {
					bad.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return !bad.Load()
}

func (s Signature) valid() bool {
	for _, st := range s {
		if stampOf(st.path) != st {
			return false
		}
	}
	return true
}

// onTheWay reports whether a name is a path the gate read or a folder
// above one.
func (g *Gate) onTheWay(names []string) bool {
	if g.ways == nil {
		g.ways = map[string]bool{}
		for _, st := range g.Signature {
			for p := st.path; !g.ways[p]; p = filepath.Dir(p) {
				g.ways[p] = true
				if filepath.Dir(p) == p {
					break
				}
			}
		}
	}
	for _, n := range names {
		if g.ways[n] {
			return true
		}
	}
	return false
}

// settle is Valid for a signature taken while some files were just
// written: such a stamp holds the content's digest (safefile.RacyWindow),
// and once its times are old enough the same file stamps without one. A
// stamp that differs only so is checked by its content, read again, and
// updated where it is when the content is the same; any other difference
// is a change. Without it, every edit was followed by a full reload at
// the next re-check (about 0.3 s in a 10,000-file tree pin).
func (s Signature) settle() bool {
	for i, old := range s {
		cur := stampOf(old.path)
		if cur == old {
			continue
		}
		if !settledSame(old.Stamp, cur.Stamp, old.path) {
			return false
		}
		s[i] = cur
	}
	return true
}

// settledSame reports whether cur, a settled stamp, is old's file with the
// same content: every field equal but the digest old held while racy, and
// the content now hashing to it.
func settledSame(old, cur safefile.Stamp, path string) bool {
	if !old.Hashed() || cur.Sum != ([sha256.Size]byte{}) {
		return false
	}
	bare := old
	bare.Sum = cur.Sum
	if bare != cur {
		return false
	}
	data, err := safefile.Read(path, safefile.Options{Max: 1 << 20})
	return err == nil && sha256.Sum256(data) == old.Sum
}

// Cache keeps computed gates by project until their signature changes.
// Each gate's folders are watched (fswatch): while nothing happened in
// them, the gate is reused without a stat; after any event, or where
// there is no watch, the signature is checked path by path.
type Cache struct {
	mu    sync.Mutex
	gates map[cacheKey]*cached
	// Hub is the inotify instance the cached gates' watches share with
	// the caller's others (set before the first Get); nil: each its own
	Hub *fswatch.Hub
	// drained counts the Gets whose drain found events (Drained)
	drained atomic.Int64
}

// Watches appends the watch of each cached gate to dst, for a caller that
// waits for their events between calls (the helper's background drain);
// it only polls them, and drains them by calling Get. A watch is the
// cache's: it may be closed by the next Get.
func (c *Cache) Watches(dst []*fswatch.Watch) []*fswatch.Watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.gates {
		if e.w != nil {
			dst = append(dst, e.w)
		}
	}
	return dst
}

// Close releases every cached gate's watch; the cache is empty after.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.gates {
		e.w.Close()
		delete(c.gates, k)
	}
}

// Drained is how many Gets found events in their watch (tests: where the
// work after a write was done).
func (c *Cache) Drained() int64 { return c.drained.Load() }

type cached struct {
	g       *Gate
	w       *fswatch.Watch // nil: check the signature every time
	checked time.Time      // the last check stat by stat
	// pending: Ahead drained events that need the slow way (a folder
	// came or went, a file other than a pinned one's content changed):
	// the next Get checks every stamp, as after a folder's change
	pending bool
}

// Ahead is Get done between calls (the helper's background drain): it
// drains the watch and answers what an edit of pinned files alone asks
// (Gate.afterEdits), as Get would. What needs the slow way, a check of
// every stamp and perhaps a new load, is left to the next Get (pending):
// a load run beside a write pauses past the kernel's clock tick and reads
// again (poisonSince), and that pause, taken here under the lock, would
// fall on the next request. It returns the cached gate
// when it is answered, or nil: no gate cached yet, or the next Get has
// work to do.
func (c *Cache) Ahead(o Options) *Gate {
	if o.Home == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.gates[cacheKey{o.Home, o.Cwd, o.ConfigPath}]
	if e == nil {
		return nil
	}
	changed, folders, lost, names := e.w.Drain()
	if !changed {
		if e.pending {
			return nil
		}
		return e.g
	}
	c.drained.Add(1)
	if e.pending {
		return nil // the next Get checks every stamp, which covers these
	}
	if !(lost || folders && e.g.onTheWay(e.w.Folders())) {
		if g, ok := e.g.afterEdits(e.w, names); ok {
			e.g = g
			return g
		}
	}
	e.pending = true
	return nil
}

// recheck is how long a cached gate is trusted on its watch's silence
// alone. inotify does not see every change: a write through a hard link
// in a folder it does not watch, a write through a shared mapping (seen
// only at munmap), a write between a file's digest and its stamp. Past
// it, the signature is checked path by path, so such a change is seen
// within this long.
var recheck = 5 * time.Second // a variable for the tests

type cacheKey struct{ home, cwd, configPath string }

// Get returns the cached gate for o when nothing it read has changed, or
// computes it afresh. The environment is not part of the key: callers whose
// environment changes use a new Cache.
//
// A gate returned is the cache's until the next Get: after an edit of
// pinned files alone, that Get refreshes it into a new gate and updates
// the old one's pinned files and signature where they are, rather than
// copy 10,000 entries for an edit of one (issue 46). Callers keep no gate
// across a Get that may run beside their use of it (the engine, its one
// user, answers one call at a time).
func (c *Cache) Get(o Options) (*Gate, error) {
	if o.Home == "" {
		return nil, paths.ErrNoHome
	}
	k := cacheKey{o.Home, o.Cwd, o.ConfigPath}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.gates[k]; e != nil {
		// The watch is drained under the lock: an event seen by one caller
		// is answered by its stat check before any other caller is.
		changed, folders, lost, names := e.w.Drain()
		if changed {
			c.drained.Add(1)
		}
		// A folder made, moved or removed matters only on the way to a
		// path the gate read; one beside them (a build folder, a test's
		// folder in /tmp) is a name like any other.
		shape := lost || folders && e.g.onTheWay(e.w.Folders())
		if e.pending {
			// events Ahead drained and left to this call
			changed, shape, e.pending = true, true, false
		}
		if changed && !shape {
			// Only the files the events name, when each is a pinned file
			// whose content alone changed (issue 46, item 1: an edit inside
			// a 10,000-file tree pin no longer stats the whole tree).
			if g, ok := e.g.afterEdits(e.w, names); ok {
				e.g, changed = g, false // what the events named is answered
			}
		}
		if !changed {
			// The re-check runs whatever events came: a stream of them
			// beside the gate (a busy /tmp) must not put off the check for
			// what inotify does not see.
			if time.Since(e.checked) < recheck {
				return e.g, nil
			}
			if e.g.Signature.Valid() || e.g.Signature.settle() {
				e.checked = time.Now()
				return e.g, nil
			}
			shape = true // something changed that no event named
		}
		if e.g.Signature.Valid() || e.g.Signature.settle() {
			if !shape {
				// Files changed nearby, not what the gate read, and every
				// watched folder is as it was: the watch still covers all.
				return e.g, nil
			}
			// A folder came or went, perhaps on the way to a missing
			// path: watch afresh.
			e.w.Close()
			if e.w = watchSignature(c.Hub, e.g.Signature); e.w == nil || e.g.Signature.Valid() {
				return e.g, nil
			}
		}
		e.w.Close()
		delete(c.gates, k)
	}
	g, err := load(o, true)
	// A file the gate read changed while it loaded (poisonSince): this
	// call's answer would be of content the next ones no longer see. Load
	// again once the clock is past the change; a file still being written
	// keeps the mark, and the gate no watch (below), so the next call
	// loads it again.
	for try := 0; err == nil && g.Signature.marked() && try < 2; try++ {
		time.Sleep(clockTick + time.Millisecond)
		g, err = load(o, true)
	}
	if err != nil {
		return nil, err
	}
	w := watchSignature(c.Hub, g.Signature)
	if w != nil && !g.Signature.Valid() {
		// changed between the reading and the watch, or still while it
		// loaded (poisonSince): no quiet answers for this gate; the next
		// call computes it again
		w.Close()
		w = nil
	}
	if c.gates == nil {
		c.gates = map[cacheKey]*cached{}
	}
	g.id = ids.Add(1)
	c.gates[k] = &cached{g: g, w: w, checked: time.Now()}
	return g, nil
}

// watchSignature watches every folder whose change can change a stamp of
// sig: every folder from each path's own folder (or the path, when it is a
// folder) up to the root, so that a folder moved away and rebuilt anywhere
// above is seen, and a missing folder's creation shows in the nearest one
// that exists. A path reached through a symbolic link gets no watch at all
// (nil): a link's target can change in folders no list of ancestors names,
// and the signature is then checked stat by stat, every time.
func watchSignature(hub *fswatch.Hub, sig Signature) *fswatch.Watch {
	w := hub.Watch()
	if w == nil {
		return nil
	}
	watched := map[string]bool{}
	linkFree := map[string]bool{}
	for _, st := range sig {
		if fi, err := os.Lstat(st.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			w.Close() // a link: its target changes where no watch here looks
			return nil
		}
		dirs := []string{filepath.Dir(st.path)}
		if st.Exists && st.Mode.IsDir() {
			dirs = append(dirs, st.path)
		}
		for _, d := range dirs {
			if !noLinks(d, linkFree) {
				w.Close()
				return nil
			}
			for ; !watched[d]; d = filepath.Dir(d) {
				if err := w.Add(d); err == nil {
					watched[d] = true
				} else if !errors.Is(err, fs.ErrNotExist) {
					w.Close()
					return nil
				}
				if filepath.Dir(d) == d {
					break
				}
			}
		}
	}
	return w
}

// noLinks reports whether the nearest existing folder at or above d is
// reached without a symbolic link.
func noLinks(d string, memo map[string]bool) bool {
	for {
		if ok, seen := memo[d]; seen {
			return ok
		}
		if _, err := os.Lstat(d); err == nil {
			r, err := filepath.EvalSymlinks(d)
			memo[d] = err == nil && r == d
			return memo[d]
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// RealEnv is getenv as the gate must read it. Inside a session that `piagent
// pi` started, Pi inherits PI_MCP_CONFIG_MODE=exclusive, which points the
// adapter at the generated file of approved servers; the gate itself must
// still judge the real configuration, so the variable is hidden there.
func RealEnv(getenv func(string) string) func(string) string {
	if getenv == nil || getenv("PIAGENT_LAUNCHER") != "1" {
		return getenv
	}
	return HideMode(getenv)
}

// HideMode is getenv without PI_MCP_CONFIG_MODE: the launcher always judges
// the real configuration, whatever mode it inherited. The one place the
// variable is hidden.
func HideMode(getenv func(string) string) func(string) string {
	return func(k string) string {
		if k == "PI_MCP_CONFIG_MODE" || getenv == nil {
			return ""
		}
		return getenv(k)
	}
}
