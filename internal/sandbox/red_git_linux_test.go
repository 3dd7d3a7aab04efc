//go:build linux

package sandbox_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/guard"
)

// redGitProject makes w's project a real repository with one commit (the
// world's .git is a sketch of one), before any command runs in it.
func redGitProject(t *testing.T, w *world) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "evil.js"}, {"commit", "-qm", "one"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir, cmd.Env = w.proj, w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// personsGitStatus is the person's next `git status` in the project,
// unconfined, after the agent's command: it reports whether a program the
// agent named ran ($F/pwned appeared).
func personsGitStatus(t *testing.T, w *world) bool {
	t.Helper()
	mark := filepath.Join(w.forge, "pwned")
	os.Remove(mark)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir, cmd.Env = w.proj, w.env
	cmd.CombinedOutput()
	_, err := os.Stat(mark)
	return err == nil
}

// TestRedNestedRepositoryFsmonitor: the sandbox keeps the project's
// .git/config, hooks, info, commondir, worktrees and the submodules that
// existed when the command started read-only, but a repository the
// command makes inside the work tree is a git folder of its own, whose
// config git reads too. The agent's command makes sub/ a repository with
// core.fsmonitor naming its program and records sub as a gitlink in the
// project's index (.git/index is writable: git add and commit work in the
// sandbox). The person's next `git status` (or `git diff`) in the project
// asks the submodule for its state, running git there, which runs the
// fsmonitor program unconfined.
//
// A mount cannot cover a folder that does not exist yet: the guard's
// engine looks when the command's result comes back (the extension asks it
// to redact every bash result), moves the nested repository's config to
// the quarantine and blocks the session, naming it. The control: the same
// command, with no engine after it, plants the program.
func TestRedNestedRepositoryFsmonitor(t *testing.T) {
	needNamespaces(t)
	script := `set -e
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
mkdir sub && cd sub
git init -q && git commit -q --allow-empty -m x
git config core.fsmonitor "touch $F/pwned; echo"
cd .. && git add sub 2>/dev/null
echo planted`
	a := attack{name: "nested repository's core.fsmonitor", script: script, effect: personsGitStatus}
	w := newWorld(t)
	redGitProject(t, w)
	w.env = append(w.env, "F="+w.forge, "A="+attackBin)
	en := &engine.Engine{Home: w.home, Cwd: w.proj}
	read := guard.Call{ToolName: "read", Input: map[string]any{"path": "evil.js"}}
	if d := en.Check(read); !d.Allowed() {
		t.Fatalf("the session's first call: %+v", d)
	}
	time.Sleep(1100 * time.Millisecond) // past the start's margin for coarse ctimes
	out, err := w.run(t, a.script)
	if !strings.Contains(out, "planted") {
		t.Fatalf("the command did not run to its end (%v):\n%s", err, out)
	}
	if _, err := en.Redact("bash", map[string]any{"command": script}, json.RawMessage(`"planted"`)); err != nil {
		t.Fatal(err)
	}
	if a.effect(t, w) {
		t.Errorf("%s: the agent's command planted a program the person's next git status runs (%v):\n%s", a.name, err, out)
	}
	d := en.Check(read)
	if d.Allowed() || !strings.Contains(d.Reason, "sub/.git/config") || !strings.Contains(d.Reason, "piagent quarantine show") {
		t.Errorf("the session after the planted nested repository: %+v", d)
	}
	c := newWorld(t)
	redGitProject(t, c)
	c.env = append(c.env, "F="+c.forge, "A="+attackBin)
	if out, err := c.run(t, a.script); !a.effect(t, c) {
		t.Errorf("control: the attack did not work without the engine after it (%v):\n%s", err, out)
	}
}
