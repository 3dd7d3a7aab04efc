package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/guard"
)

// TestRed5RecursiveSearchThroughALinkedFolder: a link in the project to the
// home (a repository may ship one: up -> .. when the project is ~/proj),
// and a recursive search through it. grep -r and rg follow a link named on
// the command line, so `grep -r token up` reads ~/.git-credentials; the
// policy judged the folder by the files the guard listed below it, and the
// guard's walk did not enter a link it was given, so it listed none and the
// command was allowed, though `grep -r token ~` is refused.
func TestRed5RecursiveSearchThroughALinkedFolder(t *testing.T) {
	home, proj := registryWorld(t)
	if err := os.WriteFile(filepath.Join(home, ".git-credentials"), []byte("https://u:pw@git.example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(proj, "up")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "a.go"), []byte("package a\n"), 0o644)
	en := &Engine{Home: home, Cwd: proj}
	bash := func(cmd string) guard.Call {
		return guard.Call{ToolName: "bash", Input: map[string]any{"command": cmd}}
	}
	for _, cmd := range []string{
		"grep -r token " + q(home), // the control: refused before
		"grep -r token up",
		"grep -r token up/",
		"grep -R token ./up",
		"rg --hidden token up",
		"rg -uu token up",
	} {
		if d := en.Decide(bash(cmd)); d.Allowed() {
			t.Errorf("%s: allowed, want a block (it reads ~/.git-credentials)", cmd)
		}
	}
	for _, cmd := range []string{"grep -r package src", "rg package src"} {
		if d := en.Decide(bash(cmd)); !d.Allowed() {
			t.Errorf("%s: %+v, want an allow", cmd, d)
		}
	}
}
