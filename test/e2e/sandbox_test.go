package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/sandbox"
)

// The model's bash call runs under `piagent sandbox exec`: a python3 -c
// that writes the approval store (no command reader sees a path in it)
// leaves the store unchanged and its output shows the refusal, while a
// benign write in the project works.
func TestSandboxedBashInPi(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	store := w.HomeFile(".pi/piagent-mcp-approvals.json")
	attack := `python3 -c "import os;p=os.path.join(os.environ['HOME'],'.'+'pi','pia'+'gent-mcp-appro'+'vals.json');open(p,'w').write('{}')"`
	w.StartLLM(
		Call("bash", map[string]any{"command": attack}),
		Call("bash", map[string]any{"command": "echo built > out.txt && cat out.txt"}),
		// the sandbox's init, PID 1 of the command's namespace
		Call("bash", map[string]any{"command": "tr '\\0' ' ' < /proc/1/cmdline"}),
	)
	path := deps.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Do it", Env: map[string]string{"PATH": path}}))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 3 {
		t.Fatalf("tool results: %+v\n%s", trs, r.Describe())
	}
	// The error line names the store, which redaction removes from what the
	// model sees; the traceback and the exit status remain.
	if !trs[0].IsError || !strings.Contains(trs[0].Text, "Traceback") || !strings.Contains(trs[0].Text, "exited with code 1") {
		t.Errorf("the store write was not refused by the sandbox: %+v", trs[0])
	}
	if data := w.Read(store); data != "" {
		t.Errorf("the approval store was written: %q", data)
	}
	if trs[1].IsError || !strings.Contains(trs[1].Text, "built") {
		t.Errorf("a benign command failed under the sandbox: %+v", trs[1])
	}
	if got := w.Read(w.ProjectFile("out.txt")); strings.TrimSpace(got) != "built" {
		t.Errorf("out.txt = %q", got)
	}
	// The helper found piagent-sandbox beside piagent and the extension ran
	// it: the command's init is the small binary (its cmdline: its exe link
	// is not readable from inside, the init being not dumpable).
	if !strings.Contains(trs[2].Text, "piagent-sandbox __piagent-sandbox-init") {
		t.Errorf("the command did not run under piagent-sandbox: %+v", trs[2])
	}
	requireNoStarts(t, w)
}

// The model's bash call reads none of the person's secret stores, by a
// path no command reader sees (python joins it), while git's readable
// configuration beside them stays readable; the same script unconfined
// reads them (the control).
func TestSecretStoresHiddenFromBashInPi(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	w.Write(w.HomeFile(".bash_history"), "echo HIST-MARKER-41\n")
	w.Write(w.HomeFile(".kube/config"), "# KUBE-MARKER-42\n")
	w.Write(w.HomeFile(".config/git/credentials"), "# GITCRED-MARKER-43\n")
	w.Write(w.HomeFile(".config/git/ignore"), "# READABLE-MARKER-44\n")
	script := `python3 -c "
import os
h=os.environ['HOME']
for p in ['.bash_'+'history','.ku'+'be/config','.config/git/cred'+'entials','.config/git/ignore']:
    try: print(open(os.path.join(h,p)).read())
    except Exception as e: print('refused', type(e).__name__)
"`
	control := exec.Command("/bin/bash", "-c", script)
	control.Env = append(os.Environ(), "HOME="+w.Home)
	if out, err := control.CombinedOutput(); err != nil || !strings.Contains(string(out), "HIST-MARKER-41") || !strings.Contains(string(out), "KUBE-MARKER-42") || !strings.Contains(string(out), "GITCRED-MARKER-43") {
		t.Fatalf("control: unconfined, the script reads the stores (%v):\n%s", err, out)
	}
	w.StartLLM(Call("bash", map[string]any{"command": script}))
	path := deps.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Do it", Env: map[string]string{"PATH": path}}))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 1 {
		t.Fatalf("tool results: %+v\n%s", trs, r.Describe())
	}
	for _, m := range []string{"HIST-MARKER-41", "KUBE-MARKER-42", "GITCRED-MARKER-43"} {
		if strings.Contains(trs[0].Text, m) {
			t.Errorf("the agent's command read %s: %s", m, trs[0].Text)
		}
	}
	if !strings.Contains(trs[0].Text, "READABLE-MARKER-44") {
		t.Errorf("git's readable ignore file was hidden too, or the command did not run: %+v", trs[0])
	}
	requireNoStarts(t, w)
}

// A trusted repository's shellPath (.pi/settings.json) is not the shell the
// agent's commands run in: the sandboxed bash always runs /bin/bash under
// piagent. The positive control, plain Pi, runs the repository's shell.
func TestSandboxIgnoresRepositoryShellPath(t *testing.T) {
	t.Parallel()
	for _, withPiagent := range []bool{false, true} {
		w, bins := guardWorld(t)
		marker := w.ProjectFile("shell-used")
		shell := w.ProjectFile("evil-shell")
		w.Write(shell, "#!/bin/sh\necho used > '"+marker+"'\nexec /bin/sh \"$@\"\n")
		os.Chmod(shell, 0o755)
		w.Write(w.ProjectFile(".pi/settings.json"), `{"shellPath": "`+shell+`"}`)
		w.StartLLM(Call("bash", map[string]any{"command": "echo hello-from-bash"}))
		opts := PiOptions{Prompt: "Run it", Args: []string{"--approve"}}
		if withPiagent {
			opts = guarded(bins, opts)
		}
		r := w.RunPi(opts)
		requireExit0(t, r)
		trs := r.ToolResults()
		if len(trs) != 1 || !strings.Contains(trs[0].Text, "hello-from-bash") {
			t.Fatalf("piagent %v: tool results %+v\n%s", withPiagent, trs, r.Describe())
		}
		used := w.Read(marker) != ""
		if withPiagent && used {
			t.Error("the repository's shellPath ran under piagent")
		}
		if !withPiagent && !used {
			t.Error("positive control: plain Pi did not run the repository's shellPath, so this test shows nothing")
		}
	}
}

// The agent's commands write no system temporary folder: TMPDIR is the
// sandbox's private folder, which Pi's own read tool reads at the same path
// (issue 36); /tmp itself is read-only to the command.
func TestPrivateTmpReadByPi(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	project := w.Project
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	private := filepath.Join(sandbox.PrivateDir(deps.piTmp, "", project), "tmp") // the TMPDIR Pi runs with
	w.StartLLM(
		Call("bash", map[string]any{"command": `echo "from-bash" > "$TMPDIR/x" && echo "tmpdir=$TMPDIR"`}),
		Call("read", map[string]any{"path": filepath.Join(private, "x")}),
		Call("bash", map[string]any{"command": `echo y > /tmp/piagent-e2e-probe && echo WROTE-TMP`}),
	)
	path := deps.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Do it", Env: map[string]string{"PATH": path}}))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 3 {
		t.Fatalf("tool results: %+v\n%s", trs, r.Describe())
	}
	if !strings.Contains(trs[0].Text, "tmpdir="+private) {
		t.Errorf("bash: TMPDIR is not the private folder: %+v", trs[0])
	}
	if !trs[2].IsError || strings.Contains(trs[2].Text, "WROTE-TMP") || !strings.Contains(trs[2].Text, "Read-only file system") {
		t.Errorf("bash wrote /tmp: %+v", trs[2])
	}
	if trs[1].IsError || !strings.Contains(trs[1].Text, "from-bash") {
		t.Errorf("Pi's read tool did not read what bash wrote in TMPDIR: %+v", trs[1])
	}
}
