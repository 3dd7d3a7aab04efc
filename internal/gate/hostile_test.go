package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// rchar is how many bytes this process has read so far (Linux).
func rchar(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("rchar: ")); ok {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			return n
		}
	}
	return -1
}

// TestHostileConfigFiles (issue 40, item 2): a repository's .mcp.json (or
// .pi/mcp.json) that is a link to /dev/zero, a FIFO or a 1 GiB file makes
// the gate answer within 100 ms, having read under 1 MiB, with a full
// block naming the file; before, /dev/zero was read without end and the
// FIFO hung.
func TestHostileConfigFiles(t *testing.T) {
	hostile := map[string]func(t *testing.T, p string){
		"dev-zero": func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"huge": func(t *testing.T, p string) {
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(`{"mcpServers":{"s":{"command":"evil"}}, "pad": "`); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(1 << 30); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, where := range []string{".mcp.json", ".pi/mcp.json"} {
		for name, plant := range hostile {
			t.Run(where+"/"+name, func(t *testing.T) {
				home, proj := t.TempDir(), t.TempDir()
				p := filepath.Join(proj, where)
				os.MkdirAll(filepath.Dir(p), 0o755)
				plant(t, p)
				before, start := rchar(t), time.Now()
				type result struct {
					g   *Gate
					err error
				}
				done := make(chan result, 1)
				go func() {
					g, err := Load(Options{Home: home, Cwd: proj})
					done <- result{g, err}
				}()
				var r result
				select {
				case r = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("Load hangs on %s", where)
				}
				took, read := time.Since(start), rchar(t)-before
				t.Logf("%s: answered in %v, %d bytes read", name, took.Round(time.Microsecond), read)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if took > 100*time.Millisecond {
					t.Errorf("the answer took %v", took)
				}
				if before >= 0 && read > 1<<20 {
					t.Errorf("%d bytes read", read)
				}
				if !r.g.FullBlock() || r.g.Blocks[0].Code != BlockUnreadableLayer || r.g.Blocks[0].Files[0] != p {
					t.Fatalf("not a full block naming %s: %+v", p, r.g.Blocks)
				}
			})
		}
	}
}
