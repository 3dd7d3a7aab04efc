// Package lazyre compiles a regular expression on its first use instead of
// at program start: piagent's commands each use a few of the many
// expressions its packages hold, and a process start pays for every
// package-level regexp.MustCompile.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp on every call after, from any goroutine. A bad
// expression panics on that first call, as regexp.MustCompile does.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
