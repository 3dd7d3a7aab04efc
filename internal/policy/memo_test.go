package policy

import (
	"fmt"
	"testing"
)

// TestMemoAgreesWithMatching: a remembered answer is the answer matching
// gives, for the same path asked again, by another tool, from the shell, and
// after the memo filled and started again.
func TestMemoAgreesWithMatching(t *testing.T) {
	p := mustMerge(t, "", "")
	f := Facts{Home: "/home/u", Cwd: "/home/u/proj", ProjectRoot: "/home/u/proj"}
	paths := []string{".env", ".env.example", "src/a.go", "~/.ssh/id_ed25519", "~/.kube/config",
		"/etc/shadow", "README.md", ".git/config", "a/b/../../.npmrc", "x.pem", "/tmp/x"}
	for i := range maxMemo + 10 { // fills the memo past its bound
		paths = append(paths, fmt.Sprintf("src/f%d.go", i))
	}
	direct := func(s string, exemptRead, shell bool) (string, bool) {
		q := *p
		q.memo = nil
		return q.protectedHit(s, &f, homeSegs(f.Home), exemptRead, shell)
	}
	for round := range 2 {
		for _, s := range paths {
			for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				wantPat, want := direct(s, flags[0], flags[1])
				gotPat, got := p.protectedHit(s, &f, homeSegs(f.Home), flags[0], flags[1])
				if got != want || gotPat != wantPat {
					t.Fatalf("round %d, %q %v: memo says %q %v, matching says %q %v", round, s, flags, gotPat, got, wantPat, want)
				}
			}
		}
	}
	if n := len(p.memo.m); n == 0 || n > maxMemo {
		t.Fatalf("memo holds %d answers, want 1..%d", n, maxMemo)
	}
}

// TestMemoIsNotShared: what one policy remembered is not another's answer
// — a path the base policy allowed (and remembered) is blocked once the
// registry's secrets are added — and a memo of one home answers nothing
// for another.
func TestMemoIsNotShared(t *testing.T) {
	p := mustMerge(t, "", "")
	f := Facts{Home: "/home/u", Cwd: "/home/u/proj", ProjectRoot: "/home/u/proj"}
	read := call("read", "path", "/srv/agent/tokens.json")
	if d := p.Decide(read, f); d.Action != ActionAllow {
		t.Fatalf("base policy: %+v", d)
	}
	withSecret := p.WithSecrets([]string{"/srv/agent/tokens.json"}, nil)
	if d := withSecret.Decide(read, f); d.Action != ActionBlock || d.Code != CodeProtectedPath {
		t.Fatalf("with the secret added, the remembered allow came back: %+v", d)
	}
	// the same relative path under two homes: ~/.ssh is protected in one
	g := Facts{Home: "/home/v", Cwd: "/home/u", ProjectRoot: "/home/u"}
	ssh := call("read", "path", "/home/u/.ssh/known_hosts")
	if d := p.Decide(ssh, g); d.Action != ActionAllow {
		t.Fatalf("home /home/v: %+v", d)
	}
	if d := p.Decide(ssh, f); d.Action != ActionBlock {
		t.Fatalf("home /home/u after /home/v was remembered: %+v", d)
	}
}
