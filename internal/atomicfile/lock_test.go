package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/safefile"
)

// TestFlockedLockFileDoesNotStopUpdate (issue 40, item 4): the agent's
// `flock ~/.pi/...json.lock sleep 20` — a read-only descriptor is enough
// for flock(2) — held piagent's writers for as long as it liked. The lock
// is now a file that exists only while held: an old lock file, flocked,
// is no holder, and Update goes ahead at once.
func TestFlockedLockFileDoesNotStopUpdate(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "state.json")
	lock := p + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil { // as an earlier piagent left it
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- Update(p, func([]byte) ([]byte, error) { return []byte("{}"), nil }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Update took %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Update waits for the agent's flock")
	}
	if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file outlives the update: %v", err)
	}
}

// TestStaleLockIsTakenOver: a lock whose holder was killed (its pid gone,
// or reused by a process started later) does not stop the next writer.
func TestStaleLockIsTakenOver(t *testing.T) {
	t.Parallel()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for name, line := range map[string]string{
		"dead pid":   fmt.Sprintf("%d 12345\n", dead.Process.Pid),
		"pid reused": fmt.Sprintf("%d 1\n", os.Getppid()), // alive, but not started at tick 1
	} {
		p := filepath.Join(t.TempDir(), "state.json")
		os.WriteFile(p+".lock", []byte(line), 0o600)
		start := time.Now()
		if err := UpdateWait(p, LockOptions{Wait: 300 * time.Millisecond}, func([]byte) ([]byte, error) { return []byte("x"), nil }); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if d := time.Since(start); d > 200*time.Millisecond {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// TestHeldLockNamesItsHolder: a lock held by a live process is waited for
// up to the bound, the person is told who holds it while waiting, and the
// error names the holder; the file is not written.
func TestHeldLockNamesItsHolder(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "state.json")
	holder := exec.Command("sleep", "30")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	pid := holder.Process.Pid
	os.WriteFile(p+".lock", []byte(fmt.Sprintf("%d %d\n", pid, startTime(pid))), 0o600)
	var told string
	start := time.Now()
	err := UpdateWait(p, LockOptions{Wait: 800 * time.Millisecond, Waiting: func(h string) { told = h }}, func([]byte) ([]byte, error) { return []byte("x"), nil })
	took := time.Since(start)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want a LockedError", err)
	}
	want := fmt.Sprintf("pid %d", pid)
	if !strings.Contains(err.Error(), want) || !strings.Contains(told, want) || !strings.Contains(told, "sleep") {
		t.Errorf("error %q, told %q: want both to name %s (sleep)", err, told, want)
	}
	if took < 800*time.Millisecond || took > 3*time.Second {
		t.Errorf("gave up after %v, want about 800ms", took)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file was written while the lock was held: %v", err)
	}
	// the holder ends: the lock is stale and taken over
	holder.Process.Kill()
	holder.Wait()
	if err := UpdateWait(p, LockOptions{Wait: 300 * time.Millisecond}, func([]byte) ([]byte, error) { return []byte("x"), nil }); err != nil {
		t.Errorf("after the holder ended: %v", err)
	}
}

// TestLockFromAnotherProcess: two processes' updates never interleave (a
// child process appends under the lock while this one does).
func TestLockExcludesAcrossProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv("ATOMICFILE_CHILD") != "" {
		return
	}
	p := filepath.Join(t.TempDir(), "state")
	exe, _ := os.Executable()
	var cmds []*exec.Cmd
	for range 3 {
		c := exec.Command(exe, "-test.run", "^TestLockChild$")
		c.Env = append(os.Environ(), "ATOMICFILE_CHILD="+p)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for range 20 {
		if err := Update(p, func(old []byte) ([]byte, error) { return append(old, 'p'), nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(p)
	if len(got) != 80 {
		t.Fatalf("%d updates recorded, want 80: %q", len(got), got)
	}
}

func TestLockChild(t *testing.T) {
	p := os.Getenv("ATOMICFILE_CHILD")
	if p == "" {
		t.Skip("run by TestLockExcludesAcrossProcesses")
	}
	for range 20 {
		if err := Update(p, func(old []byte) ([]byte, error) { return append(old, 'c'), nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBreakStaleSparesReusedInode: a process that found the lock stale (its
// holder gone) breaks it a moment later; meanwhile the holder's file was
// removed and another process took the lock, and the file system gave the
// new lock file the freed inode number. Judged by the inode alone, the
// live lock was removed and two processes held it at once (an approval
// lost in TestConcurrentProcesses, about once in 30 runs); the breaker now
// removes only the same dead holder's file.
func TestBreakStaleSparesReusedInode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	// a holder that is gone: a process that has ended
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d 1\n", dead.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	h := inspect(path)
	if !h.stale {
		t.Fatalf("control: the gone holder's lock is not stale: %+v", h)
	}
	os.Remove(path)
	release, err := tryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	h.ino = safefile.FromInfo(fi).Ino // the inode number reused
	breakStale(path, h)
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the live lock was broken: %v", err)
	}
	// control: the dead holder's own file is broken
	release()
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d 1\n", dead.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	breakStale(path, inspect(path))
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dead holder's lock stayed: %v", err)
	}
}
