package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/guard"
)

// A link in the project to a protected file that does not exist yet: Pi's
// write tool follows it and creates the file. Until this test, the guard
// judged such a write by the link's own name (a path in the project), so an
// agent could plant the approval store a new person does not have yet, a
// policy that loosens the rules, or a git hook. Each link is made while the
// engine is running (the link cache has seen the project) and again for a
// fresh engine.
func TestDanglingLinkToMissingProtectedFile(t *testing.T) {
	home, proj := registryWorld(t)
	os.RemoveAll(filepath.Join(home, ".pi"))
	os.MkdirAll(filepath.Join(home, ".pi"), 0o700)
	store := filepath.Join(home, ".pi", "piagent-mcp-approvals.json")
	pol := filepath.Join(home, ".pi", "piagent-policy.json")
	hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
	state := filepath.Join(home, ".pi", "piagent") // a missing folder of piagent's
	rel := func(target string) string {
		r, err := filepath.Rel(proj, target)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name, link, target string // target: the link's text
		write, protected   string // the path written; the file it reaches
	}{
		{"store", "notes.json", store, "notes.json", store},
		{"store, relative link", "rel.json", rel(store), "rel.json", store},
		{"policy", "cfg/policy.json", pol, "cfg/policy.json", pol},
		{"hook", "script.sh", hook, "script.sh", hook},
		{"hook, relative link", "hook.sh", ".git/hooks/pre-commit", "hook.sh", hook},
		{"a folder of piagent's, missing", "state", state, "state/grants.json", filepath.Join(state, "grants.json")},
		{"two links", "first.json", filepath.Join(proj, "second.json"), "first.json", store},
	}
	for _, fresh := range []bool{false, true} {
		en := &Engine{Home: home, Cwd: proj}
		write := func(p string) guard.Decision {
			return en.Check(guard.Call{ToolName: "write", Input: map[string]any{"path": p, "content": "{}"}})
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if _, err := os.Lstat(c.protected); err == nil {
					t.Fatalf("%s exists: the case needs it missing", c.protected)
				}
				// controls: the file itself is protected, and a new file in
				// the project is not
				if d := write(c.protected); d.Allowed() {
					t.Fatalf("control: a write of %s allowed: %+v", c.protected, d)
				}
				if d := write(c.write); !d.Allowed() {
					t.Fatalf("control: %s, not yet a link, blocked: %+v", c.write, d)
				}
				link := filepath.Join(proj, c.link)
				os.MkdirAll(filepath.Dir(link), 0o755)
				if err := os.Symlink(c.target, link); err != nil {
					t.Fatal(err)
				}
				if c.name == "two links" {
					os.Symlink(store, filepath.Join(proj, "second.json"))
					defer os.Remove(filepath.Join(proj, "second.json"))
				}
				defer os.Remove(link)
				if fresh {
					en = &Engine{Home: home, Cwd: proj}
				}
				if d := write(c.write); d.Allowed() {
					t.Errorf("a write of %s, a link to the missing %s, allowed: %+v", c.write, c.protected, d)
				} else {
					t.Logf("blocked: %s", d.Reason)
				}
			})
		}
	}
}

// Links that loop, or that lead to a plain missing file, are not made
// protected by the change above: a write of a new file through a link to
// another new file in the project stays allowed.
func TestDanglingLinkToPlainFile(t *testing.T) {
	home, proj := registryWorld(t)
	en := &Engine{Home: home, Cwd: proj}
	os.Symlink(filepath.Join(proj, "src", "new.go"), filepath.Join(proj, "new.go"))
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.Symlink("loop-b", filepath.Join(proj, "loop-a"))
	os.Symlink("loop-a", filepath.Join(proj, "loop-b"))
	for _, p := range []string{"new.go", "loop-a"} {
		if d := en.Check(guard.Call{ToolName: "write", Input: map[string]any{"path": p, "content": "x"}}); !d.Allowed() {
			t.Errorf("write %s: %+v", p, d)
		}
	}
	if got, want := resolve(filepath.Join(proj, "new.go")), filepath.Join(proj, "src", "new.go"); got != want {
		t.Errorf("resolve(new.go) = %q, want %q", got, want)
	}
	if got := resolve(filepath.Join(proj, "loop-a")); got != "" {
		t.Errorf("resolve(loop-a) = %q, want \"\" (a loop)", got)
	}
}
