//go:build !linux

package fswatch

import (
	"errors"
	"time"
)

type sys struct{}

// New returns nil: without a watch every Changed reports a change.
func New() *Watch { return nil }

func (w *Watch) Add(dir string) error { return nil }
func (w *Watch) AddTree(root string)  {}
func (w *Watch) Drain() (bool, bool, bool, []string) {
	return true, true, true, nil
}
func (w *Watch) Close() {}

// HardLinked reports true: without a watch nothing is named anyway.
func HardLinked([]string) bool { return true }

// Linked reports true likewise.
func Linked(string) bool { return true }

// Fd is -1: there is nothing to poll.
func (w *Watch) Fd() int { return -1 }

// Waiter is not to be had here: NewWaiter fails, and callers drain on
// their own path alone.
type Waiter struct{}

// NewWaiter fails: no inotify.
func NewWaiter() (*Waiter, error) { return nil, errNoWaiter }

var errNoWaiter = errors.New("no inotify on this system")

func (wt *Waiter) Wait([]int, time.Duration) (bool, error) { return false, errNoWaiter }
func (wt *Waiter) Wake()                                   {}
func (wt *Waiter) Close()                                  {}

// Hub is not to be had here: its watches are nil.
type Hub struct{}

// NewHub returns nil.
func NewHub() *Hub { return nil }

// Watch returns nil.
func (h *Hub) Watch() *Watch { return nil }

// Close does nothing.
func (h *Hub) Close() {}

// Begin does nothing.
func (h *Hub) Begin() {}

// End does nothing.
func (h *Hub) End() {}

// Folders is nil: every Drain here is lost.
func (w *Watch) Folders() []string { return nil }

// Entries reports true: nothing says otherwise.
func (w *Watch) Entries() bool { return true }

// HardLinked reports true, as the package's.
func (w *Watch) HardLinked([]string) bool { return true }
