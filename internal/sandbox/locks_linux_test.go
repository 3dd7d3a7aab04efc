//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
)

// TestAgentCannotHoldLocks (issue 40, item 4): under `sandbox exec` the
// agent flocks the approval store's lock file through a descriptor it may
// only read (what `flock ~/.pi/piagent-mcp-approvals.json.lock sleep 20`
// does), and tries to create lock files of its own with O_EXCL. Neither
// holds a writer: approve's update goes through at once. The control: the
// same lock line written unconfined, by a live process, does hold the
// writer, which then names it.
func TestAgentCannotHoldLocks(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	store := approval.Open(registry.ApprovalStore(w.home))
	lock := store.Path + ".lock"
	// a lock file as an earlier piagent left it, old
	must(t, os.WriteFile(lock, nil, 0o600))
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(lock, old, old))

	agent := exec.Command(piagentBin, "sandbox", "exec", "--", "/bin/bash", "-c",
		`flock `+lock+` sleep 4 & sleep 0.5
		 (set -C; echo "$$ 0" > ~/.pi/piagent-modes.json.lock) 2>/dev/null && echo created-modes-lock
		 (set -C; echo "$$ 0" > ~/.pi/piagent-locks/x.lock) 2>/dev/null && echo created-edit-lock
		 echo holding; wait`)
	agent.Dir, agent.Env = w.proj, w.env
	out := &strings.Builder{}
	agent.Stdout, agent.Stderr = out, out
	must(t, agent.Start())
	defer agent.Process.Kill()
	time.Sleep(time.Second) // the flock is held now (it holds for 4 s)

	start := time.Now()
	err := store.Update(func(d *approval.Data) error {
		d.Set("/elsewhere", "s", approval.Decision{Decision: approval.Rejected})
		return nil
	})
	if err != nil {
		t.Fatalf("update under the agent's flock: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the update waited %v for the agent", took)
	}
	agent.Wait()
	if strings.Contains(out.String(), "created") {
		t.Errorf("the agent created a lock file under the sandbox:\n%s", out)
	}
	for _, p := range []string{w.home + "/.pi/piagent-modes.json.lock", w.home + "/.pi/piagent-locks/x.lock"} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", p, err)
		}
	}

	// Control: a live process's line in the lock file, written outside
	// the sandbox, holds the writer until the bound, which names it.
	holder := exec.Command("/bin/sh", "-c", `echo "$$ $(cut -d' ' -f22 /proc/$$/stat)" > "$1"; exec sleep 30`, "sh", lock)
	must(t, holder.Start())
	defer holder.Process.Kill()
	for i := 0; i < 100; i++ {
		if data, _ := os.ReadFile(lock); len(data) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	err = atomicfile.UpdateWait(store.Path, atomicfile.LockOptions{Wait: 300 * time.Millisecond}, func(b []byte) ([]byte, error) { return b, nil })
	if !errors.Is(err, atomicfile.ErrLocked) || !strings.Contains(err.Error(), "sleep") {
		t.Errorf("unconfined holder: %v, want the lock held by it", err)
	}
}
