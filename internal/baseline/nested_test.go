package baseline

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RestoreNested is the launcher's last look when Pi has exited: a nested
// repository's risky config made since the session's start goes to a
// quarantine (and the person's git status no longer runs it); the same
// made before the start stays.
func TestRestoreNested(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(proj, "init", "-q")
	for _, s := range []string{"before", "during"} {
		d := filepath.Join(proj, s)
		os.Mkdir(d, 0o755)
		git(d, "init", "-q")
		git(d, "commit", "-q", "--allow-empty", "-m", "x")
		if s == "before" {
			git(d, "config", "core.fsmonitor", "echo")
			time.Sleep(1100 * time.Millisecond)
		}
	}
	start := time.Now()
	git(filepath.Join(proj, "during"), "config", "core.fsmonitor", "echo")
	git(proj, "add", "before", "during")
	q, err := RestoreNested(home, proj, start.Add(-time.Second/2), AfterExit)
	if err != nil || q == nil {
		t.Fatalf("RestoreNested: %v, %v", q, err)
	}
	if len(q.Changes) != 1 || q.Changes[0].Path != "during/.git/config" || !q.Changes[0].Kept {
		t.Errorf("quarantined %+v, want during/.git/config alone", q.Changes)
	}
	if _, err := os.Stat(filepath.Join(proj, "during", ".git", "config")); err == nil {
		t.Error("during/.git/config is still in the project")
	}
	if _, err := os.Stat(filepath.Join(proj, "before", ".git", "config")); err != nil {
		t.Errorf("the person's nested repository from before lost its config: %v", err)
	}
	if q, err := RestoreNested(home, proj, start.Add(-time.Second/2), AfterExit); q != nil || err != nil {
		t.Errorf("a second look: %+v, %v; want nothing", q, err)
	}
}
