package engine

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/piagent/piagent/internal/guard"
)

// Pi's file tools open the path in Pi's process and wait on a FIFO: a
// write held back that way waits for a reader while a command of the same
// message changes where a later write lands (TestRedParallelBatchRace), and
// a read of one hangs the session. A FIFO, a socket, and a link to either
// are blocked for every file tool; a file, a folder and a new path are not.
func TestFileToolsRefuseFIFOs(t *testing.T) {
	home, proj := registryWorld(t)
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(proj, "l.json"))
	l, err := net.Listen("unix", filepath.Join(proj, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.WriteFile(filepath.Join(proj, "plain.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(proj, "dir"), 0o755)
	en := &Engine{Home: home, Cwd: proj}
	for _, tool := range []string{"read", "write", "edit", "grep", "find", "ls"} {
		for _, p := range []string{"fifo", "l.json", "sock", filepath.Join(proj, "fifo")} {
			d := en.Check(guard.Call{ToolName: tool, Input: map[string]any{"path": p, "content": "x"}})
			if d.Allowed() || d.Code != CodeNotAFile {
				t.Errorf("%s %s: %+v, want blocked (%s)", tool, p, d, CodeNotAFile)
			}
		}
	}
	for _, c := range []guard.Call{
		{ToolName: "read", Input: map[string]any{"path": "plain.txt"}},
		{ToolName: "write", Input: map[string]any{"path": "new.txt", "content": "x"}},
		{ToolName: "ls", Input: map[string]any{"path": "dir"}},
		{ToolName: "grep", Input: map[string]any{"pattern": "x", "path": "."}},
	} {
		if d := en.Check(c); !d.Allowed() {
			t.Errorf("control %s %v: %+v", c.ToolName, c.Input, d)
		}
	}
}
