package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// .devcontainer -> dc -> tools/devcontainer: the command re-points dc.
func TestLinkChainSwapped(t *testing.T) {
	home, proj := registryWorld(t)
	linkedDC(t, proj)
	mustOK(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(proj, "dc")))
	mustOK(t, os.Symlink("dc", filepath.Join(proj, ".devcontainer")))
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	evilDC(t, filepath.Join(proj, "evil"))
	os.Remove(filepath.Join(proj, "dc"))
	mustOK(t, os.Symlink("evil", filepath.Join(proj, "dc")))
	d := en.Check(readCall())
	if d.Allowed() && pwned(proj) {
		t.Errorf("the second link of a chain re-pointed: .devcontainer now leads to the command's folder and the next call is allowed: %+v", d)
	}
}

// .devcontainer -> tools/devcontainer with tools -> vendor/tools: the
// command re-points tools.
func TestLinkedFolderOnTheWay(t *testing.T) {
	home, proj := registryWorld(t)
	linkedDC(t, filepath.Join(proj, "vendor"))
	mustOK(t, os.Symlink(filepath.Join("vendor", "tools"), filepath.Join(proj, "tools")))
	mustOK(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(proj, ".devcontainer")))
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	evilDC(t, filepath.Join(proj, "evil", "devcontainer"))
	os.Remove(filepath.Join(proj, "tools"))
	mustOK(t, os.Symlink("evil", filepath.Join(proj, "tools")))
	d := en.Check(readCall())
	if d.Allowed() && pwned(proj) {
		t.Errorf("a linked folder on the link's way re-pointed: next call allowed: %+v", d)
	}
}

// Landlock alone (no mount): nothing locks tools/devcontainer; the watch
// records what the link leads to, so a write to it by its own path is
// found.
func TestLinkTargetWritten(t *testing.T) {
	home, proj := registryWorld(t)
	linkedDC(t, proj)
	mustOK(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(proj, ".devcontainer")))
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	evilDC(t, filepath.Join(proj, "tools", "devcontainer"))
	d := en.Check(readCall())
	if d.Allowed() && pwned(proj) {
		t.Errorf("the link's target rewritten (as a command under Landlock alone can): next call allowed: %+v", d)
	}
}

// A large .opencode (its node_modules) fills the walk's bound: the
// .devcontainer link, later in the roots, is compared all the same (a
// root's own entry is always recorded).
func TestLinkPastTheBound(t *testing.T) {
	home, proj := registryWorld(t)
	linkedDC(t, proj)
	mustOK(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(proj, ".devcontainer")))
	nm := filepath.Join(proj, ".opencode", "node_modules", "pkg")
	mustOK(t, os.MkdirAll(nm, 0o755))
	for i := range 5100 {
		os.WriteFile(filepath.Join(nm, fmt.Sprintf("f%d.js", i)), nil, 0o644)
	}
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	evilDC(t, filepath.Join(proj, "evil"))
	os.Remove(filepath.Join(proj, ".devcontainer"))
	mustOK(t, os.Symlink("evil", filepath.Join(proj, ".devcontainer")))
	d := en.Check(readCall())
	if d.Allowed() && pwned(proj) {
		t.Errorf(".devcontainer link re-pointed past the watch's bound: next call allowed: %+v", d)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// .git a file (gitdir inside the project): re-pointed by a command at a
// git folder with a hook, it is found (the .git file is registered).
func TestGitFileRepointed(t *testing.T) {
	home, proj := registryWorld(t)
	os.RemoveAll(filepath.Join(proj, ".git"))
	if out, err := exec.Command("git", "init", "-q", "--separate-git-dir="+filepath.Join(proj, ".realgit"), proj).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(proj, ".realgit"), filepath.Join(proj, "evilgit")).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.WriteFile(filepath.Join(proj, "evilgit", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch pwned\n"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: "+filepath.Join(proj, "evilgit")+"\n"), 0o644)
	if d := en.Check(readCall()); d.Allowed() {
		t.Errorf(".git file re-pointed at a git folder with a hook: next call allowed")
	}
}

// .git a file: the hook written straight into the git folder it names
// (what a command under Landlock alone can do: no mount locks it).
func TestGitFileHookWatched(t *testing.T) {
	home, proj := registryWorld(t)
	os.RemoveAll(filepath.Join(proj, ".git"))
	if out, err := exec.Command("git", "init", "-q", "--separate-git-dir="+filepath.Join(proj, ".realgit"), proj).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	os.WriteFile(filepath.Join(proj, ".realgit", "hooks", "pre-commit"), []byte("#!/bin/sh\ntouch pwned\n"), 0o755)
	os.WriteFile(filepath.Join(proj, ".realgit", "config"), []byte("[core]\n\tfsmonitor = touch pwned\n"), 0o644)
	if d := en.Check(readCall()); d.Allowed() {
		t.Errorf(".git a file: a hook and core.fsmonitor written in the git folder it names: next call allowed")
	}
}
