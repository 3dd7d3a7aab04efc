package helper

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperAnswersOverHostileConfig (issue 40, item 2): a repository's
// .mcp.json that is a link to /dev/zero or a FIFO: the helper answers
// decide at once, blocking every call and naming the file, instead of
// never answering (every call blocked by the extension's timeout, the
// helper restarted in a loop).
func TestHelperAnswersOverHostileConfig(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(string) error{
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home, cwd := t.TempDir(), t.TempDir()
			p := filepath.Join(cwd, ".mcp.json")
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			c := start(t, home, cwd)
			done := make(chan map[string]any, 1)
			began := time.Now()
			go func() {
				done <- c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": "README.md"}})
			}()
			select {
			case m := <-done:
				r, _ := m["result"].(map[string]any)
				if r == nil || r["action"] != "block" || !strings.Contains(r["reason"].(string), p) {
					t.Fatalf("decide: %v", m)
				}
				if took := time.Since(began); took > time.Second {
					t.Errorf("the answer took %v", took)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the helper does not answer")
			}
		})
	}
}
