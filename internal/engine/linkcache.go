package engine

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/paths"
)

// linkCache remembers where paths really lead, for the checks every tool
// call makes of every path-like string in its input (one lstat per folder
// on the way, each time, otherwise). Only paths with no symbolic link on
// the way are remembered, and every folder on their way is watched: a
// link, rename or removal anywhere on the way is an event in a watched
// folder. An event on a file forgets the paths at and below it; one on a
// folder (created, moved, removed, its own attributes) or one the watch
// cannot name forgets everything. Without a watch (not Linux, no inotify)
// nothing is remembered.
type linkCache struct {
	mu      sync.Mutex
	hub     *fswatch.Hub // the engine's; nil: a watch of its own
	w       *fswatch.Watch
	tried   bool
	real    map[string]string // resolve: the path as it is, with no link on the way
	exists  map[string]bool   // realPath: whether the path exists, with no link on the way
	watched map[string]bool
	drained bool // the watch was read since the call began (begin)
	drains  atomic.Int64
}

// refresh drains the watch, as the first path a call checks does; Refresh
// calls it between calls. A cache that has no watch yet is left alone.
func (c *linkCache) refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tried {
		c.drained = false
		c.fresh()
	}
}

// begin marks the start of a tool call's decision: the watch is read once
// per decision, before the first path it checks.
func (c *linkCache) begin() {
	c.mu.Lock()
	c.drained = false
	c.mu.Unlock()
}

// cacheLimit bounds what is remembered and watched; past it, everything is
// forgotten and the watch starts afresh.
const cacheLimit = 4096

func (c *linkCache) reset() {
	c.real = map[string]string{}
	c.exists = map[string]bool{}
	if len(c.watched) > cacheLimit {
		c.w.Close()
		c.w = c.hub.Watch()
		c.watched = map[string]bool{}
	}
}

// fresh drains the watch and reports whether the cache may be used.
func (c *linkCache) fresh() bool {
	if !c.tried {
		c.tried = true
		c.w = c.hub.Watch()
		c.watched = map[string]bool{}
		c.reset()
	}
	if c.w == nil {
		return false
	}
	if !c.drained {
		c.drained = true
		if changed, folders, lost, names := c.w.Drain(); changed {
			c.drains.Add(1)
			// a folder made, moved or removed matters only where it is a
			// watched folder or on the way to a remembered path (a test's
			// folder made in /tmp, above every project there, is not)
			c.forget(lost || folders && c.onTheWay(c.w.Folders()), names)
		}
	}
	if len(c.real)+len(c.exists) > cacheLimit {
		c.reset()
	}
	return c.w != nil
}

// forget drops what the events named can have changed: the paths at and
// below each name (a file replaced by a link to a folder leads the paths
// below it elsewhere), or everything for an event on a folder or one
// without a name (issue 46: a write in the project no longer costs every
// path's resolution again).
func (c *linkCache) forget(shape bool, names []string) {
	if shape {
		// a watched folder may have been moved or removed: its watch
		// follows the old inode or is gone, and the folder now at that
		// name would be watched by nothing; watch afresh
		c.w.Close()
		c.w, c.watched = c.hub.Watch(), map[string]bool{}
		c.reset()
		return
	}
	for _, n := range names {
		if c.watched[n] {
			c.reset() // the folder itself: its mode decides every path below
			return
		}
		for k := range c.real {
			if paths.Within(n, k) {
				delete(c.real, k)
			}
		}
		for k := range c.exists {
			if paths.Within(n, k) {
				delete(c.exists, k)
			}
		}
	}
}

// onTheWay reports whether a name is a watched folder or at or above a
// remembered path.
func (c *linkCache) onTheWay(names []string) bool {
	for _, n := range names {
		if c.watched[n] {
			return true
		}
		for k := range c.real {
			if paths.Within(n, k) {
				return true
			}
		}
		for k := range c.exists {
			if paths.Within(n, k) {
				return true
			}
		}
	}
	return false
}

// resolutions counts the paths resolved outside the cache (tests).
var resolutions atomic.Int64

// watchWay watches every folder from p's parent up to the root. A folder
// that does not exist is skipped: its creation is an event in the folder
// above, which is watched.
func (c *linkCache) watchWay(p string) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if !c.watched[d] {
			if err := c.w.Add(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false
			} else if err == nil {
				c.watched[d] = true
			}
		}
		if filepath.Dir(d) == d {
			return true
		}
	}
}

func (c *linkCache) realPath(p string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	use := c.fresh()
	if e, ok := c.exists[p]; use && ok {
		if !e {
			return "", false
		}
		return p, true
	}
	resolutions.Add(1)
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		// missing: remembered when no link leads to where it would be;
		// where one does (a dangling link on the way), where a write
		// would land
		l := resolve(p)
		if l != p && l != "" {
			return l, true
		}
		if use && l == p && c.watchWay(p) {
			c.exists[p] = false
		}
		return "", false
	}
	if use && r == p && c.watchWay(p) {
		c.exists[p] = true
	}
	return r, true
}

// resolve is the package's resolve through the cache.
func (c *linkCache) resolve(p string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	use := c.fresh()
	if r, ok := c.real[p]; use && ok {
		return r
	}
	resolutions.Add(1)
	r := resolve(p)
	if use && r == p && p != "" && c.watchWay(p) {
		c.real[p] = r
	}
	return r
}
