package engine

import "github.com/piagent/piagent/internal/fswatch"

// Refresh does between calls what the next call would do first (issue 46,
// item 1: the answer after an edit): it drains the three watches and acts
// on what they report, as a call would: the gate refreshed after an edit
// of pinned files, or a change beside what it read passed over
// (gate.Cache.Ahead), with the guard snapshot built around it; the
// session's protected files compared with its start (and put back); and
// the paths remembered where an event touched their way forgotten. The
// next call then finds the queues empty. What needs the gate's slow way
// (a configuration file, a folder) is left to the next call, which does
// it as before. Each call still
// drains them itself: a write just before a call is seen by that call,
// whether Refresh ran or not.
//
// The caller serialises Refresh with every other call of the engine (the
// helper holds one lock around both): the gate it replaces is the one a
// call would be using. It pins no catalogue: a first sight is left to the
// next call, which shows it to the person.
func (en *Engine) Refresh() {
	en.Begin()
	defer en.End()
	if _, err := en.build(false); err == nil {
		en.mu.Lock()
		w := en.watch
		en.mu.Unlock()
		if w != nil {
			w.changed()
		}
	}
	en.links.refresh()
}

// Watches appends the engine's watches to dst: the gate cache's, the link
// cache's and the session's, those that exist yet and are read. The
// caller holds the lock it serialises calls with; it may read their
// descriptors (fswatch.Watch.Fd) then and wait on them after. Every watch
// stays the engine's, and Refresh or a call may close one and make
// another.
func (en *Engine) Watches(dst []*fswatch.Watch) []*fswatch.Watch {
	dst = en.cache.Watches(dst)
	en.links.mu.Lock()
	if en.links.w != nil {
		dst = append(dst, en.links.w)
	}
	en.links.mu.Unlock()
	en.mu.Lock()
	// a session whose comparison failed is blocked for good, and its
	// watch is no longer read
	if en.watch != nil && en.watch.watch != nil && en.watch.failed == "" {
		dst = append(dst, en.watch.watch)
	}
	en.mu.Unlock()
	return dst
}

// Drained counts the drains of the engine's watches that found events,
// since it began (tests and benchmarks: whether the work after a write
// fell on a call or between calls).
func (en *Engine) Drained() int64 {
	n := en.cache.Drained() + en.links.drains.Load()
	en.mu.Lock()
	if en.watch != nil {
		n += en.watch.drains.Load()
	}
	en.mu.Unlock()
	return n
}

// Close releases the engine's watches (inotify instances are counted per
// user, fs.inotify.max_user_instances). Call it once nothing uses the
// engine any more: a later call is blocked (the session's watch is gone).
func (en *Engine) Close() {
	en.cache.Close()
	en.links.mu.Lock()
	en.links.w.Close()
	en.links.w, en.links.tried = nil, false
	en.links.mu.Unlock()
	en.mu.Lock()
	if en.watch != nil {
		en.watch.watch.Close()
		en.watch.watch = nil
		en.watch.failed = "the engine was closed"
	}
	en.mu.Unlock()
	en.hub.Close()
}

// Begin starts one call's drains of the engine's watches (the helper's
// request, or Refresh): the shared inotify instance is read by the first,
// once (fswatch.Hub.Begin). End ends it; the caller serialises both with
// every other call of the engine. Without them every drain reads.
func (en *Engine) Begin() { en.options(); en.hub.Begin() }

// End ends what Begin started.
func (en *Engine) End() { en.hub.End() }
