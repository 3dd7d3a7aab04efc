package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A registered path the person made a link: the session's watch records
// the link, the links on its way and what it leads to, so a command that
// re-points any of them, or rewrites the end (as a command under Landlock
// alone can), is found at the next call. And the .git file of a linked
// work tree, and the git folder it names inside the project.

func linkedDC(t *testing.T, proj string) {
	t.Helper()
	target := filepath.Join(proj, "tools", "devcontainer")
	os.MkdirAll(target, 0o755)
	os.WriteFile(filepath.Join(target, "devcontainer.json"), []byte(`{"image": "debian"}`), 0o644)
}

func evilDC(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "devcontainer.json"), []byte(`{"initializeCommand": "touch pwned"}`), 0o644)
}

func pwned(proj string) bool {
	b, _ := os.ReadFile(filepath.Join(proj, ".devcontainer", "devcontainer.json"))
	return string(b) == `{"initializeCommand": "touch pwned"}`
}

// TestLinkedRootsWatched: each case sets up a registered path the person
// made a link (or a .git file), takes the session's first call, then does
// what a command may (under Landlock alone, or where no mount holds it);
// the next call must be blocked for it, and what the command changed put
// back.
func TestLinkedRootsWatched(t *testing.T) {
	const hook = "#!/bin/sh\ntouch pwned\n"
	link := func(target, at string) func(t *testing.T, proj string) {
		return func(t *testing.T, proj string) {
			os.Remove(filepath.Join(proj, at))
			mustOK(t, os.Symlink(target, filepath.Join(proj, at)))
		}
	}
	both := func(fs ...func(t *testing.T, proj string)) func(t *testing.T, proj string) {
		return func(t *testing.T, proj string) {
			for _, f := range fs {
				f(t, proj)
			}
		}
	}
	devcontainer := func(dir string) func(t *testing.T, proj string) {
		return func(t *testing.T, proj string) { linkedDC(t, filepath.Join(proj, dir)) }
	}
	evil := func(dir string) func(t *testing.T, proj string) {
		return func(t *testing.T, proj string) { evilDC(t, filepath.Join(proj, dir)) }
	}
	gitFile := func(t *testing.T, proj string) {
		os.RemoveAll(filepath.Join(proj, ".git"))
		if out, err := exec.Command("git", "init", "-q", "--separate-git-dir="+filepath.Join(proj, ".realgit"), proj).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	for _, c := range []struct {
		name          string
		setup, attack func(t *testing.T, proj string)
		// putBack reports whether what the attack changed is back
		putBack func(proj string) bool
	}{
		// .devcontainer -> dc -> tools/devcontainer: the command re-points dc
		{"the second link of a chain re-pointed",
			both(devcontainer(""), link(filepath.Join("tools", "devcontainer"), "dc"), link("dc", ".devcontainer")),
			both(evil("evil"), link("evil", "dc")), notPwned},
		// .devcontainer -> tools/devcontainer with tools -> vendor/tools:
		// the command re-points tools
		{"a linked folder on the way re-pointed",
			both(devcontainer("vendor"), link(filepath.Join("vendor", "tools"), "tools"), link(filepath.Join("tools", "devcontainer"), ".devcontainer")),
			both(evil(filepath.Join("evil", "devcontainer")), link("evil", "tools")), notPwned},
		// nothing locks tools/devcontainer under Landlock alone: a write by
		// its own path
		{"the link's target rewritten",
			both(devcontainer(""), link(filepath.Join("tools", "devcontainer"), ".devcontainer")),
			evil(filepath.Join("tools", "devcontainer")), notPwned},
		// a large .opencode (its node_modules) fills the walk's bound: the
		// .devcontainer link, later in the roots, is compared all the same
		{"the link re-pointed past the walk's bound",
			both(devcontainer(""), link(filepath.Join("tools", "devcontainer"), ".devcontainer"), func(t *testing.T, proj string) {
				nm := filepath.Join(proj, ".opencode", "node_modules", "pkg")
				mustOK(t, os.MkdirAll(nm, 0o755))
				for i := range 5100 {
					os.WriteFile(filepath.Join(nm, fmt.Sprintf("f%d.js", i)), nil, 0o644)
				}
			}),
			both(evil("evil"), link("evil", ".devcontainer")), notPwned},
		// the link replaced by a folder of the command's own
		{"the link replaced by a folder",
			both(devcontainer(""), link(filepath.Join("tools", "devcontainer"), ".devcontainer")),
			func(t *testing.T, proj string) {
				os.Remove(filepath.Join(proj, ".devcontainer"))
				evilDC(t, filepath.Join(proj, ".devcontainer"))
			}, func(proj string) bool {
				fi, err := os.Lstat(filepath.Join(proj, ".devcontainer"))
				return err == nil && fi.Mode()&os.ModeSymlink != 0 && notPwned(proj)
			}},
		// .git a file (gitdir inside the project) re-pointed at a git
		// folder with a hook
		{".git file re-pointed", gitFile, func(t *testing.T, proj string) {
			if out, err := exec.Command("cp", "-r", filepath.Join(proj, ".realgit"), filepath.Join(proj, "evilgit")).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			os.WriteFile(filepath.Join(proj, "evilgit", "hooks", "pre-commit"), []byte(hook), 0o755)
			os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: "+filepath.Join(proj, "evilgit")+"\n"), 0o644)
		}, func(proj string) bool {
			b, _ := os.ReadFile(filepath.Join(proj, ".git"))
			return !strings.Contains(string(b), "evilgit")
		}},
		// .git a file: a hook and core.fsmonitor written in the git folder
		// it names
		{"the named git folder's hook and config written", gitFile, func(t *testing.T, proj string) {
			os.WriteFile(filepath.Join(proj, ".realgit", "hooks", "pre-commit"), []byte(hook), 0o755)
			os.WriteFile(filepath.Join(proj, ".realgit", "config"), []byte("[core]\n\tfsmonitor = touch pwned\n"), 0o644)
		}, func(proj string) bool {
			_, err := os.Lstat(filepath.Join(proj, ".realgit", "hooks", "pre-commit"))
			b, _ := os.ReadFile(filepath.Join(proj, ".realgit", "config"))
			return err != nil && !strings.Contains(string(b), "pwned")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, proj := registryWorld(t)
			c.setup(t, proj)
			en := &Engine{Home: home, Cwd: proj}
			if d := en.Check(readCall()); !d.Allowed() {
				t.Fatalf("first call: %+v", d)
			}
			c.attack(t, proj)
			if d := en.Check(readCall()); d.Allowed() || d.Code != CodeIntegrity {
				t.Errorf("the next call: %+v", d)
			}
			if !c.putBack(proj) {
				t.Error("what the command changed was not put back")
			}
		})
	}
}

// notPwned: .devcontainer leads again to the person's configuration.
func notPwned(proj string) bool { return !pwned(proj) }

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
