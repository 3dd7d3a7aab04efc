package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/testenv"
)

// fakePi writes an executable shell script and returns an Env that runs
// `piagent pi` in a fresh project with PIAGENT_PI pointing at it.
func fakePi(t *testing.T, script string) (Env, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pi := filepath.Join(root, "pi.sh")
	// The launcher asks Pi's version first.
	if err := os.WriteFile(pi, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 0.86.1; exit 0; fi\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A parallel test's fork may still hold the write descriptor open for
	// a moment (golang/go#22315): exec then fails with "text file busy".
	// Wait until the script runs, so the launcher's own probe does not
	// meet it (seen once in CI as the ordinary user).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := exec.Command(pi, "--version").Run()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stays busy: %v", pi, err)
		}
	}
	var stderr bytes.Buffer
	return Env{
		Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr,
		Environ: []string{"PATH=/usr/bin:/bin", "HOME=" + home, "PIAGENT_PI=" + pi, "ROOT=" + root},
		Dir:     proj, Home: home,
	}, &stderr
}

// Pi's exit status is piagent's; a signal that ends Pi gives 128+n.
func TestPiExitStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		script string
		want   int
	}{
		{"exit 0\n", 0},
		{"exit 3\n", 3},
		{"exit 1\n", 1},
		{"kill -TERM $$\n", 128 + 15},
		{"kill -KILL $$\n", 128 + 9},
	}
	for _, tc := range cases {
		env, stderr := fakePi(t, tc.script)
		if got := Main("piagent", []string{"pi", "-p", "x"}, env); got != tc.want {
			t.Errorf("%q: exit %d, want %d\nstderr: %s", tc.script, got, tc.want, stderr)
		}
		if tc.want != 0 && strings.Contains(stderr.String(), "error") {
			t.Errorf("%q: piagent added an error of its own: %s", tc.script, stderr)
		}
	}
}

// A signal sent to piagent reaches Pi, and piagent waits for Pi's own exit.
// Not parallel: it signals the test process, which catches the signal only
// while piagent pi runs.
func TestPiForwardsSignals(t *testing.T) {
	env, stderr := fakePi(t, `trap 'echo TERM > "$ROOT/got"; exit 7' TERM
echo ready > "$ROOT/ready"
while :; do sleep 0.05; done
`)
	root := strings.TrimPrefix(env.Environ[3], "ROOT=")
	done := make(chan int, 1)
	go func() { done <- Main("piagent", []string{"pi"}, env) }()
	deadline := time.Now().Add(testenv.Slow(10 * time.Second))
	for {
		if _, err := os.Stat(filepath.Join(root, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake pi never started; stderr: %s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 7 {
			t.Errorf("exit %d, want Pi's 7", code)
		}
	case <-time.After(testenv.Slow(10 * time.Second)):
		t.Fatal("piagent pi did not return after SIGTERM")
	}
	if data, _ := os.ReadFile(filepath.Join(root, "got")); strings.TrimSpace(string(data)) != "TERM" {
		t.Errorf("Pi did not receive SIGTERM (got %q)", data)
	}
}

func TestStartupWarnings(t *testing.T) {
	t.Parallel()
	env, _ := fakePi(t, "exit 0\n")
	proj := env.Dir
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers": {"r": {"command": "node", "lifecycle": "eager"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := gate.Load(gate.Options{Home: env.Home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	ws := ops.StartupWarnings(g)
	if len(ws) != 1 || ws[0].Code != "startup-risk" || ws[0].Server != "r" ||
		!strings.Contains(ws[0].Text, "no metadata cache") || !strings.Contains(ws[0].Text, "lifecycle eager") || !strings.Contains(ws[0].Text, "piagent pi") {
		t.Errorf("warnings = %+v", ws)
	}
}

// Issue 38: Pi's code caches follow its TMPDIR, so piagent pi gives Pi a
// folder of the person's own under ~/.pi/piagent (registered: the agent
// cannot write it) and tells the sandbox the TMPDIR it was started with.
// A folder someone else could write is refused, nothing started.
func TestPiTempDir(t *testing.T) {
	t.Parallel()
	env, stderr := fakePi(t, `printf '%s\n%s\n%s\n' "$TMPDIR" "$PIAGENT_TMPDIR" "$JITI_RESPECT_TMPDIR_ENV" > "$ROOT/env"`+"\n")
	root := strings.TrimPrefix(env.Environ[3], "ROOT=")
	env.Environ = append(env.Environ, "TMPDIR=/var/tmp/mine")
	if got := Main("piagent", []string{"pi", "-p", "x"}, env); got != 0 {
		t.Fatalf("exit %d: %s", got, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(root, "env"))
	want := filepath.Join(env.Home, ".pi", "piagent", "tmp") + "\n/var/tmp/mine\n1\n"
	if string(data) != want {
		t.Errorf("Pi's environment: %q, want %q", data, want)
	}
	fi, err := os.Lstat(filepath.Join(env.Home, ".pi", "piagent", "tmp"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("Pi's temporary folder: %v %v", fi, err)
	}
	// A private folder of the person's in the shared, sticky /tmp is theirs:
	// others may not rename or remove it there.
	shared, err := os.MkdirTemp("", "piagent-pitmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	env2, stderr2 := fakePi(t, `printf '%s\n' "$TMPDIR" > "$ROOT/env"`+"\n")
	root2 := strings.TrimPrefix(env2.Environ[3], "ROOT=")
	env2.Environ = append(env2.Environ, "PIAGENT_PI_TMPDIR="+shared)
	if got := Main("piagent", []string{"pi", "-p", "x"}, env2); got != 0 {
		t.Errorf("a private folder in the sticky %s: exit %d: %s", os.TempDir(), got, stderr2)
	} else if data, _ := os.ReadFile(filepath.Join(root2, "env")); string(data) != shared+"\n" {
		t.Errorf("Pi's TMPDIR = %q, want %s", data, shared)
	}

	// The sandbox under this Pi keeps its private folders in the first TMPDIR.
	sub := Env{Environ: []string{"TMPDIR=" + strings.TrimSpace(strings.Split(string(data), "\n")[0]), "PIAGENT_TMPDIR=/var/tmp/mine", "PIAGENT_LAUNCHER=1"}}
	if got := tempDir(sub); got != "/var/tmp/mine" {
		t.Errorf("the sandbox's temporary folder under piagent pi = %s", got)
	}
	sub.Environ[1] = "PIAGENT_TMPDIR="
	if got := tempDir(sub); got != "/tmp" {
		t.Errorf("the sandbox's temporary folder under piagent pi with no TMPDIR = %s", got)
	}

	for name, dir := range map[string]func(string) string{
		"world-writable": func(root string) string {
			d := filepath.Join(root, "open")
			os.Mkdir(d, 0o777)
			os.Chmod(d, 0o777)
			return d
		},
		"a link": func(root string) string {
			d := filepath.Join(root, "link")
			os.Symlink(t.TempDir(), d)
			return d
		},
		"the shared /tmp": func(string) string { return "/tmp" }, // root's and 1777: refused for anyone
		"a private folder in an open folder": func(root string) string {
			open := filepath.Join(root, "open-parent")
			os.Mkdir(open, 0o777)
			os.Chmod(open, 0o777) // not sticky: anyone may rename the folder and put theirs in its place
			d := filepath.Join(open, "mine")
			os.Mkdir(d, 0o700)
			return d
		},
	} {
		env, stderr := fakePi(t, `echo started > "$ROOT/started"`+"\n")
		root := strings.TrimPrefix(env.Environ[3], "ROOT=")
		env.Environ = append(env.Environ, "PIAGENT_PI_TMPDIR="+dir(root))
		if got := Main("piagent", []string{"pi", "-p", "x"}, env); got == 0 {
			t.Errorf("%s: exit 0", name)
		}
		if _, err := os.Stat(filepath.Join(root, "started")); err == nil {
			t.Errorf("%s: Pi started", name)
		}
		if !strings.Contains(stderr.String(), "refusing") || !strings.Contains(stderr.String(), "Pi loads code it finds there") {
			t.Errorf("%s: stderr does not say why: %s", name, stderr)
		}
	}
}

// doctor warns of a Pi code cache in the temporary folder that someone else
// could write (made first by another user, or left open), names the folder
// and the fix; the person's own cache under a sandbox is no warning.
func TestPiCacheWarnings(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	if w := ops.PiCacheWarnings(tmp, true); len(w) != 0 {
		t.Errorf("no caches: %+v", w)
	}
	jiti := filepath.Join(tmp, "jiti")
	os.Mkdir(jiti, 0o700)
	if w := ops.PiCacheWarnings(tmp, true); len(w) != 0 {
		t.Errorf("the person's own cache under a sandbox: %+v", w)
	}
	if w := ops.PiCacheWarnings(tmp, false); len(w) != 1 || w[0].Code != "pi-cache-writable" {
		t.Errorf("no sandbox: %+v", w)
	}
	// the person's own cache in the shared, sticky temporary folder
	shared, err := os.MkdirTemp("", "piagent-cache-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	if w := launch.ForeignCache(shared); w != "" {
		t.Errorf("the person's own folder in the sticky %s: %s", os.TempDir(), w)
	}
	os.Chmod(jiti, 0o777)
	w := ops.PiCacheWarnings(tmp, true)
	if len(w) != 1 || w[0].Code != "pi-cache-foreign" || w[0].File != jiti || !strings.Contains(w[0].Text, "rm -rf "+jiti) {
		t.Errorf("an open cache: %+v", w)
	}
	os.Remove(jiti)
	os.Symlink(t.TempDir(), filepath.Join(tmp, "node-compile-cache"))
	if w := ops.PiCacheWarnings(tmp, true); len(w) != 1 || !strings.Contains(w[0].Text, "not a folder") {
		t.Errorf("a link: %+v", w)
	}
}

// TestResumeHint: issue 42, item 10. Pi's exit hint 'pi --session ID'
// starts Pi without the launcher; after an interactive session piagent pi
// names the session Pi wrote, through the launcher, and --session reaches
// Pi unchanged.
func TestResumeHint(t *testing.T) {
	t.Parallel()
	// The fake Pi logs its arguments and, like Pi, writes the session to
	// <agentDir>/sessions/--<cwd>--/<timestamp>_<id>.jsonl.
	env, stderr := fakePi(t, `echo "$*" > "$ROOT/args"
d="$HOME/.pi/agent/sessions/--$(pwd | sed 's|^/||; s|/|-|g')--"
mkdir -p "$d"
echo '{"type":"session"}' > "$d/2026-12-05T07-30-00-000Z_0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
exit 0
`)
	env.Interactive = true
	if code := Main("piagent", []string{"pi"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "piagent: to resume this session with only approved MCP servers: piagent pi --session 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b\n"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	// Resuming passes --session through, after the launcher's own flags.
	stderr.Reset()
	if code := Main("piagent", []string{"pi", "--session", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	root := strings.TrimPrefix(env.Environ[3], "ROOT=")
	args, err := os.ReadFile(filepath.Join(root, "args"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(" "+strings.TrimSpace(string(args)), " --session 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b") {
		t.Errorf("Pi got %q", args)
	}
	stderr.Reset()
	if code := Main("piagent", []string{"pi", "--resume"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if args, _ = os.ReadFile(filepath.Join(root, "args")); !strings.HasSuffix(strings.TrimSpace(string(args)), "--resume") {
		t.Errorf("Pi got %q", args)
	}
	// No session written (a session older than this run): no hint; and
	// none without a terminal, like Pi's own.
	env2, stderr2 := fakePi(t, "exit 0\n")
	env2.Interactive = true
	Main("piagent", []string{"pi"}, env2)
	if strings.Contains(stderr2.String(), "to resume") {
		t.Errorf("hint without a session: %s", stderr2)
	}
	env.Interactive = false
	stderr.Reset()
	Main("piagent", []string{"pi"}, env)
	if strings.Contains(stderr.String(), "to resume") {
		t.Errorf("hint without a terminal: %s", stderr)
	}
}
