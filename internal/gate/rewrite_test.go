package gate

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/safefile"
)

// sameSizeRewrite does what the agent can do in sourceWrite mode: cp -p
// path /tmp/ref, an edit of the same length in place, touch -r /tmp/ref
// path. Size, mtime, mode and inode are as they were.
func sameSizeRewrite(t *testing.T, path, from, to string) {
	t.Helper()
	if len(from) != len(to) {
		t.Fatal("the rewrite must keep the size")
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), from) {
		t.Fatalf("%s holds no %q", path, from)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, strings.Replace(string(data), from, to, 1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Fatal("the rewrite changed what the old stamp compared")
	}
}

// TestCacheSeesSameSizeSameMtimeRewrite (issue 40, item 1): a cached gate
// notices a same-size, same-mtime rewrite of an approved server's script
// and of the approval store. "settled" waits until the change times are
// older than safefile.RacyWindow, so only the change time can tell (the
// test fails when the stamp leaves ctime out); "racy" rewrites at once,
// where the change time may fall in the same tick and the content's digest
// tells (TestStampSeesRewriteWithinOneTick holds that part).
func TestCacheSeesSameSizeSameMtimeRewrite(t *testing.T) {
	t.Parallel()
	for _, wait := range []bool{true, false} {
		name := map[bool]string{true: "settled", false: "racy"}[wait]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home, proj := t.TempDir(), t.TempDir()
			script := filepath.Join(proj, "server.mjs")
			writeFile(t, script, "console.log('good')\n")
			writeFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers":{"s":{"command":"node","args":["server.mjs"]}}}`)
			g, err := Load(Options{Home: home, Cwd: proj})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := g.Server("s")
			files := map[string]string{}
			for _, p := range s.Pinned {
				files[p.Path] = p.Digest
			}
			if files["server.mjs"] == "" {
				t.Fatalf("server.mjs is not pinned: %+v", s.Pinned)
			}
			store := approval.Open(filepath.Join(home, ".pi", "piagent-mcp-approvals.json"))
			if err := store.Update(func(d *approval.Data) error {
				d.Set(g.Project, "s", approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-03T00:00:00Z", Files: files})
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if wait {
				time.Sleep(safefile.RacyWindow + 200*time.Millisecond)
			}
			var c Cache
			o := Options{Home: home, Cwd: proj, Getenv: func(k string) string {
				if k == "PATH" {
					return "/usr/local/bin:/usr/bin:/bin"
				}
				return ""
			}}
			state := func() string {
				g, err := c.Get(o)
				if err != nil {
					t.Fatal(err)
				}
				s, _ := g.Server("s")
				return s.State
			}
			first := state()
			if first == PendingApproval || first == ApprovalChanged || first == Rejected {
				t.Fatalf("approved server: %s", first)
			}
			sameSizeRewrite(t, script, "good", "evil")
			if got := state(); got != ApprovalChanged {
				t.Fatalf("after a same-size same-mtime rewrite of server.mjs: %s, want %s", got, ApprovalChanged)
			}
			sameSizeRewrite(t, script, "evil", "good")
			if got := state(); got != first {
				t.Fatalf("script restored: %s, want %s", got, first)
			}
			sameSizeRewrite(t, store.Path, `"approved"`, `"rejected"`)
			if got := state(); got != Rejected {
				t.Fatalf("after the store was rewritten in place: %s, want %s", got, Rejected)
			}
			// ~/.pi made writable by every user: the store stops counting
			// at once (issue 40, item 5)
			sameSizeRewrite(t, store.Path, `"rejected"`, `"approved"`)
			os.Chmod(filepath.Dir(store.Path), 0o777)
			if got := state(); got != PendingApproval {
				t.Fatalf("with ~/.pi writable by every user: %s, want %s", got, PendingApproval)
			}
			os.Chmod(filepath.Dir(store.Path), 0o700)
			if got := state(); got != first {
				t.Fatalf("~/.pi restored: %s, want %s", got, first)
			}
		})
	}
}
