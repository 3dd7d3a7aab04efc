package atomicfile

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKilledWritesLeaveNothing (issue 40, item 8): a writer SIGKILLed at
// random points while it replaces a repository's .mcp.json, 200 times,
// leaves no temporary file beside it once the next write has run (before,
// 13-19 per 200 kills stayed for `git add -A` to commit), and the file is
// always whole.
func TestKilledWritesLeaveNothing(t *testing.T) {
	if p := os.Getenv("ATOMICFILE_WRITER"); p != "" {
		t.Skip("the writer is TestKillWriter")
	}
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, ".mcp.json")
	exe, _ := os.Executable()
	const kills = 200
	for range kills {
		c := exec.Command(exe, "-test.run", "^TestKillWriter$")
		c.Env = append(os.Environ(), "ATOMICFILE_WRITER="+p)
		out, _ := c.StdoutPipe()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n') // writing from now on
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		c.Process.Kill()
		c.Wait()
		if data, err := os.ReadFile(p); err == nil && !strings.HasPrefix(string(data), `{"mcpServers"`) {
			t.Fatalf("a torn file: %q", data)
		}
	}
	left := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
		return m
	}
	t.Logf("%d kills: %d temporary files right after them", kills, len(left()))
	if err := WriteMode(p, []byte(`{"mcpServers":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if l := left(); len(l) != 0 {
		t.Errorf("%d temporary files left after the next write, such as %v", len(l), l[:min(3, len(l))])
	}
}

// TestKillWriter is the writer TestKilledWritesLeaveNothing kills.
func TestKillWriter(t *testing.T) {
	p := os.Getenv("ATOMICFILE_WRITER")
	if p == "" {
		t.Skip("run by TestKilledWritesLeaveNothing")
	}
	data := []byte(`{"mcpServers":{"s":{"command":"x","args":["` + strings.Repeat("a", 4000) + `"]}}}`)
	os.Stdout.WriteString("writing\n")
	for {
		if err := WriteMode(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
