package helper

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/piagent/piagent/internal/fswatch"
)

// The background drain (issue 46, item 1: the answer after an edit). An
// edit made by the agent's last call, or by the person, leaves events in
// the engine's watches; the next call would drain them and do what they
// ask (stat what they name, digest an edited pinned file, judge its
// server again and build the guard snapshot around it) before it could
// answer. One goroutine per Serve waits on the watches' descriptors
// (poll(2), which reads nothing) and, when one has events, takes the
// lock every request holds and runs engine.Refresh: the same drain and
// the work an edit asks for, done between calls (what needs the gate's
// slow way, a check of every stamp or a load, is left to the next
// request: gate.Cache.Ahead says why). Each request still drains every
// watch first, under the same lock: a write just before a request is seen
// by that request whether the goroutine ran or not. It only moves work
// earlier; nothing depends on it.

// waitTimeout bounds a wait: the set of watches is read again after it
// (a request that replaces a watch also wakes the wait, check).
const waitTimeout = 2 * time.Second

// minGap is the least time between two background refreshes, and gapFactor
// the part of a refresh's own time waited after it: a stream of events
// (a build writing in the project, a busy /tmp above it) costs at most
// about a fifth of a processor between calls, not all of one.
const (
	minGap    = time.Millisecond
	gapFactor = 4
)

// waiter is fswatch.Waiter (a variable for the tests: one that fails).
type waiter interface {
	Wait(fds []int, timeout time.Duration) (bool, error)
	Wake()
	Close()
}

var newWaiter = func() (waiter, error) {
	w, err := fswatch.NewWaiter()
	if err != nil {
		return nil, err
	}
	return w, nil
}

type drainer struct {
	s  *Server
	wt waiter
	// watches are those the goroutine waits on, read under s.mu; fds
	// theirs; scratch is check's
	watches, scratch []*fswatch.Watch
	fds              []int
	stopping, ended  atomic.Bool
	done             chan struct{}
}

// startDrain starts the background drain; nil when there is no waiter
// (then every request drains alone, as before).
func (s *Server) startDrain() *drainer {
	wt, err := newWaiter()
	if err != nil {
		return nil
	}
	d := &drainer{s: s, wt: wt, done: make(chan struct{})}
	go d.run()
	return d
}

func (d *drainer) run() {
	defer close(d.done)
	defer d.ended.Store(true)
	s := d.s
	for !d.stopping.Load() {
		s.mu.Lock()
		d.watches = s.Engine.Watches(d.watches[:0])
		d.fds = d.fds[:0]
		for _, w := range d.watches {
			// the engine's watches share one instance (fswatch.Hub)
			if fd := w.Fd(); !slices.Contains(d.fds, fd) {
				d.fds = append(d.fds, fd)
			}
		}
		s.mu.Unlock()
		ready, err := d.wt.Wait(d.fds, waitTimeout)
		if err != nil {
			return // the requests drain alone
		}
		if !ready || d.stopping.Load() {
			continue
		}
		start := time.Now()
		s.mu.Lock()
		n := s.Engine.Drained()
		s.Engine.Refresh()
		s.between += s.Engine.Drained() - n
		s.refreshes++
		s.mu.Unlock()
		if _, err := d.wt.Wait(nil, max(minGap, gapFactor*time.Since(start))); err != nil {
			return
		}
	}
}

// check wakes the goroutine when a request replaced a watch it waits on
// (the gate's, after a folder came or went; the link cache's; the first
// request's new ones). Called with s.mu held.
func (d *drainer) check() {
	if d == nil || d.ended.Load() {
		return
	}
	d.scratch = d.s.Engine.Watches(d.scratch[:0])
	if !slices.Equal(d.scratch, d.watches) {
		d.wt.Wake()
	}
}

// stop ends the goroutine and waits for it.
func (d *drainer) stop() {
	if d == nil {
		return
	}
	d.stopping.Store(true)
	d.wt.Wake()
	<-d.done
	d.wt.Close()
}
