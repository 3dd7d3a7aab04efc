//go:build unix

package approval

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// specialFiles makes a FIFO and a link to it; reading either must not block.
func specialFiles(t *testing.T, dir string) []string {
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	return []string{fifo, link}
}
