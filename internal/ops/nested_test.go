package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The launcher's last look when Pi has exited (AfterSession): a nested
// repository a session left with a program in its config (a server's last
// act, after the helper's last look) goes to a quarantine, which the
// answer names; the person's git status no longer runs it.
func TestAfterSessionNestedRepository(t *testing.T) {
	o, project := world(t)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(project, "init", "-q")
	s, file, err := o.TakeBaseline(project, ".pi")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sub := filepath.Join(project, "sub")
	os.Mkdir(sub, 0o755)
	git(sub, "init", "-q")
	git(sub, "commit", "-q", "--allow-empty", "-m", "x")
	mark := filepath.Join(t.TempDir(), "pwned")
	git(sub, "config", "core.fsmonitor", "touch "+mark+"; echo")
	git(project, "add", "sub")
	made, err := o.AfterSession(project, s, file, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 || len(made[0].Changes) != 1 || made[0].Changes[0].Path != "sub/.git/config" {
		for _, q := range made {
			t.Logf("quarantine %+v", *q)
		}
		t.Fatalf("%d quarantines made, want one of sub/.git/config", len(made))
	}
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = project
	cmd.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Error("the person's git status ran the nested repository's program")
	}
}
