//go:build !linux

package helper

type dirtyWatch struct{}

func newDirtyWatch(trees, parents []string) *dirtyWatch { return nil }

// changed: without a watch every call counts as a change.
func (w *dirtyWatch) changed() bool { return true }
