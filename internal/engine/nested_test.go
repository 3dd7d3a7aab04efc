package engine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/guard"
)

func gitIn(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// ran reports whether the person's git status in proj runs the program
// the nested repository names (it touches mark).
func ran(t *testing.T, proj, mark string) bool {
	os.Remove(mark)
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = proj
	cmd.CombinedOutput()
	_, err := os.Stat(mark)
	return err == nil
}

// A nested repository git enters from the project (a gitlink in the index)
// with a setting that runs a program: made during the session, its config
// goes to the quarantine when the command's result comes back, and the
// session is blocked naming it; one the person had before the session is
// left alone; a plain nested repository (git init, git submodule add) is
// no trip at all.
func TestNestedRepositoryQuarantined(t *testing.T) {
	home, proj := registryWorld(t)
	os.RemoveAll(filepath.Join(proj, ".git"))
	gitIn(t, proj, nil, "init", "-q")
	mark := filepath.Join(t.TempDir(), "pwned")
	// the person's own nested repository, from before the session, with
	// a program of theirs
	mine := filepath.Join(proj, "mine")
	os.Mkdir(mine, 0o755)
	gitIn(t, mine, nil, "init", "-q")
	gitIn(t, mine, nil, "commit", "-q", "--allow-empty", "-m", "x")
	gitIn(t, mine, nil, "config", "core.sshCommand", "ssh -i ~/.ssh/work")
	gitIn(t, proj, nil, "add", "mine")
	// and a submodule of theirs
	up := t.TempDir()
	gitIn(t, up, nil, "init", "-q")
	gitIn(t, up, nil, "commit", "-q", "--allow-empty", "-m", "x")
	gitIn(t, proj, nil, "submodule", "-q", "add", up, "mod")
	time.Sleep(1100 * time.Millisecond)

	en := &Engine{Home: home, Cwd: proj}
	read := guard.Call{ToolName: "read", Input: map[string]any{"path": ".mcp.json"}}
	afterBash := func() {
		t.Helper()
		if _, err := en.Redact("bash", map[string]any{"command": "x"}, json.RawMessage(`"ok"`)); err != nil {
			t.Fatal(err)
		}
	}
	if d := en.Check(read); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	time.Sleep(1100 * time.Millisecond)
	// the agent's command: a plain nested repository, recorded
	plain := filepath.Join(proj, "plain")
	os.Mkdir(plain, 0o755)
	gitIn(t, plain, nil, "init", "-q")
	gitIn(t, plain, nil, "commit", "-q", "--allow-empty", "-m", "x")
	gitIn(t, proj, nil, "add", "plain")
	afterBash()
	if d := en.Check(read); !d.Allowed() {
		t.Fatalf("after a plain nested repository: %+v", d)
	}
	if _, err := os.Stat(filepath.Join(mine, ".git", "config")); err != nil {
		t.Fatalf("the person's nested repository lost its config: %v", err)
	}
	// the attack: the submodule's config (in .git/modules, which the
	// sandbox binds read-only where it has namespaces; Landlock alone
	// cannot) runs a program
	gitIn(t, filepath.Join(proj, "mod"), nil, "config", "core.fsmonitor", "touch "+mark+"; echo")
	afterBash()
	if ran(t, proj, mark) {
		t.Fatal("the person's git status ran the program the agent's command set in the submodule")
	}
	d := en.Check(read)
	if d.Allowed() || !strings.Contains(d.Reason, ".git/modules/mod/config") || !strings.Contains(d.Reason, "core.fsmonitor") || !strings.Contains(d.Reason, "piagent quarantine show") {
		t.Fatalf("after the planted fsmonitor: %+v", d)
	}
	// control: put back, the program runs
	q := strings.Fields(d.Reason[strings.Index(d.Reason, "piagent quarantine show ")+len("piagent quarantine show "):])[0]
	q = strings.TrimRight(q, "',")
	kept := filepath.Join(home, ".pi", "piagent", "quarantine", q, "files", ".git", "modules", "mod", "config")
	b, err := os.ReadFile(kept)
	if err != nil {
		t.Fatalf("the quarantined config: %v", err)
	}
	os.WriteFile(filepath.Join(proj, ".git", "modules", "mod", "config"), b, 0o644)
	if !ran(t, proj, mark) {
		t.Error("control: the quarantined config, put back, did not run its program")
	}
}
