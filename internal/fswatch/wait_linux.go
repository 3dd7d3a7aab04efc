//go:build linux

package fswatch

import (
	"time"

	"golang.org/x/sys/unix"
)

// Fd is the watch's inotify descriptor, for a Waiter to poll; -1 when
// there is none to poll (a nil watch, or one that reports a change on
// every Drain). It stays the watch's: nothing but Drain reads it, and
// Close closes it.
func (w *Watch) Fd() int {
	if w == nil || w.broken {
		return -1
	}
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	return w.hub.fd
}

// Waiter waits until one of a set of watches has events, without reading
// them: a hint for a caller that drains them later, under its own lock
// (poll(2) consumes nothing). Its own eventfd ends a wait early (Wake).
type Waiter struct {
	efd int
	pfd []unix.PollFd
}

// NewWaiter returns a waiter, or an error when the system has none.
func NewWaiter() (*Waiter, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &Waiter{efd: efd}, nil
}

// Wait blocks until one of fds is readable (ready), Wake is called, or
// timeout passes. fds are descriptors from Fd, read by the caller while
// their watches were open; -1 is passed over. A descriptor closed and
// perhaps opened again as another file since is no harm: the answer is a
// hint, and the caller drains its watches (or finds nothing) under its
// lock. An error other than an interrupted call means the waiter cannot
// wait; the caller stops using it.
func (wt *Waiter) Wait(fds []int, timeout time.Duration) (ready bool, err error) {
	wt.pfd = append(wt.pfd[:0], unix.PollFd{Fd: int32(wt.efd), Events: unix.POLLIN})
	for _, fd := range fds {
		if fd >= 0 {
			wt.pfd = append(wt.pfd, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		}
	}
	ms := int(timeout / time.Millisecond)
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	n, err := unix.Poll(wt.pfd, ms)
	if err == unix.EINTR {
		return false, nil
	}
	if err != nil || n == 0 {
		return false, err
	}
	if wt.pfd[0].Revents != 0 {
		var b [8]byte
		unix.Read(wt.efd, b[:]) // reset the count: the wake is taken
	}
	for _, p := range wt.pfd[1:] {
		if p.Revents != 0 { // readable, or closed (POLLNVAL): look again
			return true, nil
		}
	}
	return false, nil
}

// Wake ends the current or the next Wait.
func (wt *Waiter) Wake() {
	one := [8]byte{1}
	unix.Write(wt.efd, one[:])
}

// Close releases the waiter; call it after the last Wait has returned.
func (wt *Waiter) Close() { unix.Close(wt.efd) }
