//go:build unix

package engine

import (
	"os"
	"syscall"
)

// hardLinks is how many names the file at p has (links followed), 0 when it
// is missing, not a regular file, or unknown (policy.Facts.HardLinks).
func hardLinks(p string) int {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Nlink)
	}
	return 0
}
