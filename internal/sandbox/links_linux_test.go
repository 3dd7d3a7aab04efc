//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const linkEvil = `{"initializeCommand": "touch pwned"}`

// TestLinkChainAttacks: a registered path that is a link to a link
// (.devcontainer -> dc -> tools/devcontainer), through a linked folder
// (tools -> vendor/tools) or through ".." is not followed: the command is
// refused, so none of them can re-point what the entry leads to.
func TestLinkChainAttacks(t *testing.T) {
	needNamespaces(t)
	chain := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, "tools", "devcontainer", "devcontainer.json"), `{"image": "debian"}`)
		must(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(w.proj, "dc")))
		must(t, os.Symlink("dc", filepath.Join(w.proj, ".devcontainer")))
	}
	folder := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, "vendor", "tools", "devcontainer", "devcontainer.json"), `{"image": "debian"}`)
		must(t, os.Symlink(filepath.Join("vendor", "tools"), filepath.Join(w.proj, "tools")))
		must(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(w.proj, ".devcontainer")))
	}
	dotdot := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, "vendor", "dc", "devcontainer.json"), `{"image": "debian"}`)
		must(t, os.MkdirAll(filepath.Join(w.proj, "vendor", "a"), 0o755))
		must(t, os.Symlink(filepath.Join("vendor", "a"), filepath.Join(w.proj, "sub")))
		must(t, os.Symlink("sub/../dc", filepath.Join(w.proj, ".devcontainer")))
	}
	for _, a := range []attack{
		{name: "second link of a chain re-pointed", setup: chain,
			script: `mkdir -p evil && echo '` + linkEvil + `' > evil/devcontainer.json && ln -sfn evil dc`,
			effect: fileHas(".devcontainer/devcontainer.json", "pwned")},
		{name: "linked folder on the way re-pointed", setup: folder,
			script: `mkdir -p evil/devcontainer && echo '` + linkEvil + `' > evil/devcontainer/devcontainer.json && ln -sfn evil tools`,
			effect: fileHas(".devcontainer/devcontainer.json", "pwned")},
		{name: "link before .. re-pointed", setup: dotdot,
			script: `mkdir -p evil/a evil/dc && echo '` + linkEvil + `' > evil/dc/devcontainer.json && ln -sfn evil/a sub`,
			effect: fileHas(".devcontainer/devcontainer.json", "pwned")},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestGitFileAttacks: a project whose .git is a file (a linked work tree,
// a submodule, git init --separate-git-dir) naming a git folder inside the
// project: the .git file is locked (re-pointed, git would run the hooks of
// a git folder the command made), and so are that folder's hooks.
func TestGitFileAttacks(t *testing.T) {
	needNamespaces(t)
	gitfile := func(t *testing.T, w *world) {
		must(t, os.RemoveAll(filepath.Join(w.proj, ".git")))
		out, err := exec.Command("git", "init", "-q", "--separate-git-dir="+filepath.Join(w.proj, ".realgit"), w.proj).CombinedOutput()
		if err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	const plant = `cp -r .realgit evilgit && printf '#!/bin/sh\ntouch pwned\n' > evilgit/hooks/pre-commit && chmod +x evilgit/hooks/pre-commit && echo "gitdir: $PWD/evilgit" > .git`
	for _, a := range []attack{
		{name: ".git file re-pointed", setup: gitfile, script: plant, effect: fileHas(".git", "evilgit")},
		{name: "hook in the git folder", setup: gitfile, script: `printf '#!/bin/sh\ntouch pwned\n' > .realgit/hooks/pre-commit`, effect: fileHas(".realgit/hooks/pre-commit", "pwned")},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestPlantedHookTexts: a command creates folders under .git/modules (the
// agent's to write) that look like submodules' git folders, each hook a
// hard link to one 64 KiB text of pre-commit's family full of "-c" words;
// the next command's registry must not parse them into thousands of
// entries (it took 9.6 s and 1.1 GB for 16 such folders when it did).
func TestPlantedHookTexts(t *testing.T) {
	needNamespaces(t)
	n := "16"
	w := newWorld(t)
	plant := `python3 - <<'PY'
import os
n = int(os.environ.get("N", "4"))
text = "#!/bin/sh\n# pre-commit run\n" + "".join("-c a%d " % i for i in range(20000))
text = text[:65000] + "\n"
os.makedirs(".git/modules/x0/hooks", exist_ok=True)
src = ".git/modules/x0/hooks/pre-commit"
open(src, "w").write(text)
hooks = ["applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"]
for i in range(n):
    d = ".git/modules/x%d" % i
    os.makedirs(d + "/hooks", exist_ok=True)
    open(d + "/HEAD", "w").write("ref: refs/heads/main\n")
    for h in hooks:
        p = d + "/hooks/" + h
        if p != src and not os.path.exists(p):
            os.link(src, p)
print("planted", n)
PY`
	pc := exec.Command(leanBin, "exec", "--keep-env", "N", "--", "/bin/bash", "-c", plant)
	pc.Dir, pc.Env = w.proj, append(w.env, "N="+n)
	out, err := pc.CombinedOutput()
	if !strings.Contains(string(out), "planted "+n) {
		t.Fatalf("planting under the sandbox: %v\n%s", err, out)
	}
	start := time.Now()
	cmd := exec.Command(leanBin, "exec", "--", "/bin/bash", "-c", "echo ran")
	cmd.Dir, cmd.Env = w.proj, w.env
	b, err := cmd.CombinedOutput()
	took := time.Since(start)
	if took > 2*time.Second || err != nil || !strings.Contains(string(b), "ran") {
		t.Errorf("text the agent planted under .git/modules makes every later sandbox exec take %v (%s)", took, strings.TrimSpace(tail(string(b))))
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
