package policy

import (
	"strings"
	"testing"
)

// red5Facts are testFacts with a link in the project to the home folder
// (home -> /home/u, as a cloned repository may ship one) and /proc/self/root,
// the kernel's link to "/".
func red5Facts() Facts {
	f := testFacts()
	f.RealPath = func(p string) (string, bool) {
		for from, to := range map[string]string{"/home/u/proj/home": "/home/u", "/proc/self/root": "/"} {
			if p == from {
				return to, true
			}
			if strings.HasPrefix(p, from+"/") {
				return strings.TrimSuffix(to, "/") + p[len(from):], true
			}
		}
		return fakeRealPath(p)
	}
	return f
}

// TestRed5GrepThroughALinkedFolder: Pi's grep searched a folder reached
// through a link (a link the repository ships to the home, or
// /proc/self/root/home/u), and rg prints each path relative to the folder
// named; the lines of ~/.git-credentials and ~/.bash_history came back,
// judged as files below the link's own name, which no pattern names.
func TestRed5GrepThroughALinkedFolder(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	content := strings.Join([]string{
		".git-credentials:1: https://u:plainpassword1@git.example.com",
		".bash_history:3: mysql -p'Tr0ub4dor' prod",
		"notes.txt:1: nothing secret",
	}, "\n")
	want := strings.Join([]string{
		"[piagent: 2 lines from protected files removed]",
		"notes.txt:1: nothing secret",
	}, "\n")
	for _, root := range []string{"home", "./home/", "/home/u/proj/home", "/proc/self/root/home/u", "/proc/self/root/home/u/"} {
		c := call("grep", "pattern", "p", "path", root)
		if d := p.Decide(c, red5Facts()); d.Action != ActionAllow {
			t.Fatalf("grep %s: %s %s, want an allow (the folder itself is no secret)", root, d.Action, d.Code)
		}
		got, rep := p.Redact(c, content, red5Facts())
		if got != want || rep.Removed != 2 {
			t.Errorf("grep %s: got %q (%d removed), want %q", root, got, rep.Removed, want)
		}
	}
	// one file through the link: grep prints its base name
	c := call("grep", "pattern", "p", "path", "/proc/self/root/home/u/.bash_history")
	if d := p.Decide(c, red5Facts()); d.Action != ActionBlock {
		t.Errorf("grep on the file itself: %s, want a block", d.Action)
	}
}
