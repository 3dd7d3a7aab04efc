//go:build unix

package imports

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNotRegularFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tree(t, root, map[string]string{"h/.cursor": "DIR", "p": "DIR"})
	if err := syscall.Mkfifo(filepath.Join(root, "h/.cursor/mcp.json"), 0o644); err != nil {
		t.Skip("no fifo:", err)
	}
	res := Read("cursor", filepath.Join(root, "h"), filepath.Join(root, "p"))
	want := []Candidate{{Path: filepath.Join(root, "h/.cursor/mcp.json"), Adapter: true, Status: StatusUnreadable, Err: "not a regular file"}}
	if diff := cmp.Diff(want, res.Candidates); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
