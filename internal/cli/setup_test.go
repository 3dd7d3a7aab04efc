package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// setupWorld is a fake home with the fake pi, node and npm of the setup
// testscripts on PATH, and a fake piagent for PIAGENT_BIN.
type setupWorld struct {
	t         *testing.T
	home, bin string
}

func newSetupWorld(t *testing.T) *setupWorld {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "setup_fresh.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	w := &setupWorld{t: t, home: t.TempDir(), bin: t.TempDir()}
	for _, f := range ar.Files {
		if name, ok := strings.CutPrefix(f.Name, "bin/"); ok {
			if err := os.WriteFile(filepath.Join(w.bin, name), f.Data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	fake := "#!/bin/sh\necho 'piagent " + Version + " (helper protocol test)'\n"
	if err := os.WriteFile(filepath.Join(w.bin, "fake-piagent"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *setupWorld) run(stdin string, interactive bool, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	var out, errb bytes.Buffer
	env := Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Dir: w.home, Home: w.home,
		Environ: []string{"HOME=" + w.home, "PATH=" + w.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
			"PIAGENT_BIN=" + filepath.Join(w.bin, "fake-piagent"), "GITHUB_PERSONAL_ACCESS_TOKEN=set-for-the-test"},
		Now:         func() time.Time { return time.Unix(0, 0) },
		Interactive: interactive,
	}
	code = Main("piagent", args, env)
	return out.String(), errb.String(), code
}

func setupJSONKeys(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return m
}

func requireSetupKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q", what, k)
		}
	}
}

// TestSetupJSONFields pins the --json contract of setup, setup --check and
// uninstall, and the private modes of what setup writes.
func TestSetupJSONFields(t *testing.T) {
	t.Parallel()
	w := newSetupWorld(t)

	out, errs, code := w.run("", false, "setup", "--check", "--json")
	if code != 1 {
		t.Fatalf("check before setup: exit %d, want 1\n%s", code, errs)
	}
	m := setupJSONKeys(t, out)
	requireSetupKeys(t, "setup --check --json", m, "action", "ok", "pi", "node", "settings", "packages", "extension", "adapter", "ordered", "piagent", "record", "problems")
	if m["ok"] != false {
		t.Errorf("ok = %v before setup", m["ok"])
	}

	out, errs, code = w.run("", false, "setup", "--json")
	if code != 0 {
		t.Fatalf("setup: exit %d\n%s", code, errs)
	}
	m = setupJSONKeys(t, out)
	requireSetupKeys(t, "setup --json", m, "action", "dryRun", "changed", "pi", "node", "settings", "extension", "extensionFiles",
		"actions", "problems", "addsAdapter", "preset", "needs", "record", "recordChanged")
	acts, _ := m["actions"].([]any)
	if len(acts) != 2 {
		t.Fatalf("actions = %v, want 2", acts)
	}
	for _, a := range acts {
		requireSetupKeys(t, "action", a.(map[string]any), "op", "source", "target", "why", "command", "done")
	}
	if m["changed"] != true || m["addsAdapter"] != true {
		t.Errorf("changed %v addsAdapter %v, want true true", m["changed"], m["addsAdapter"])
	}
	needs, _ := m["needs"].([]any)
	var needServers []string
	for _, n := range needs {
		requireSetupKeys(t, "need", n.(map[string]any), "server", "kind", "text")
		needServers = append(needServers, n.(map[string]any)["server"].(string))
	}
	for _, s := range []string{"github", "chrome-devtools"} {
		if !slices.Contains(needServers, s) {
			t.Errorf("needs %v lack %s", needServers, s)
		}
	}

	for path, want := range map[string]os.FileMode{
		filepath.Join(w.home, ".pi", "piagent", "setup.json"):                     0o600,
		filepath.Join(w.home, ".pi", "piagent"):                                   0o700 | os.ModeDir,
		filepath.Join(w.home, ".pi", "piagent", "extension", Version, "index.ts"): 0o600,
		filepath.Join(w.home, ".config", "mcp", "mcp.json"):                       0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeDir); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}

	out, errs, code = w.run("", false, "setup", "--check", "--json")
	if code != 0 {
		t.Fatalf("check after setup: exit %d\n%s\n%s", code, out, errs)
	}
	m = setupJSONKeys(t, out)
	if m["ok"] != true || m["ordered"] != true {
		t.Errorf("check after setup: ok %v ordered %v", m["ok"], m["ordered"])
	}
	if pb, _ := m["piagent"].(map[string]any); pb["via"] != "PIAGENT_BIN" || pb["version"] != Version {
		t.Errorf("piagent = %v", pb)
	}

	out, errs, code = w.run("", false, "uninstall", "--json")
	if code != 0 {
		t.Fatalf("uninstall: exit %d\n%s", code, errs)
	}
	requireSetupKeys(t, "uninstall --json", setupJSONKeys(t, out), "action", "purge", "actions", "removed", "kept", "changed")
}

// uninstall --purge on a terminal asks, and only "y" or "yes" goes ahead;
// anything else is a cancel, exit 3.
func TestUninstallPurgeAsks(t *testing.T) {
	t.Parallel()
	w := newSetupWorld(t)
	if _, errs, code := w.run("", false, "setup"); code != 0 {
		t.Fatalf("setup: exit %d\n%s", code, errs)
	}
	store := filepath.Join(w.home, ".pi", "piagent-mcp-approvals.json")
	if err := os.WriteFile(store, []byte(`{"schemaVersion": 1, "projects": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"", "n\n", "no\n", "maybe\n"} {
		_, errs, code := w.run(answer, true, "uninstall", "--purge")
		if code != exitCancelled || !strings.Contains(errs, "Continue? [y/N]") || !strings.Contains(errs, "error: nothing removed") {
			t.Errorf("answer %q: exit %d\n%s", answer, code, errs)
		}
		if _, err := os.Stat(store); err != nil {
			t.Errorf("answer %q removed the store: %v", answer, err)
		}
		if _, err := os.Stat(filepath.Join(w.home, ".pi", "piagent", "setup.json")); err != nil {
			t.Errorf("answer %q removed the record: %v", answer, err)
		}
	}
	out, errs, code := w.run("yes\n", true, "uninstall", "--purge")
	if code != 0 {
		t.Fatalf("purge: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "piagent-mcp-approvals.json (every approval decision)") {
		t.Errorf("the question does not name the store:\n%s", errs)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("store still there after yes: %v\n%s", err, out)
	}
}

// TestSetupPiagentNotOnPath: issue 42, item 4. After `go install`, ~/go/bin
// is often not on PATH; setup says which folder piagent runs from and the
// line that puts it there, and does not call itself done.
func TestSetupPiagentNotOnPath(t *testing.T) {
	w := newSetupWorld(t)
	var out, errb bytes.Buffer
	env := Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: w.home, Home: w.home,
		Environ: []string{"HOME=" + w.home, "PATH=" + w.bin + ":/usr/bin:/bin"},
		Now:     func() time.Time { return time.Unix(0, 0) },
	}
	code := Main("piagent", []string{"setup", "--no-mcp"}, env)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(exe)
	if code != exitAttention {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitAttention, errb.String())
	}
	for _, want := range []string{
		"piagent: error: piagent is not on PATH (this one runs from " + dir + ", where go install put it)",
		"piagent: hint: export PATH=\"" + dir + ":$PATH\" now, and add that line to ~/.profile",
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if strings.Contains(out.String(), "start Pi with") {
		t.Errorf("setup says it is done with piagent off PATH:\n%s", out.String())
	}
}

// TestPurgeWalksTheRegistry: uninstall --purge removes every file and
// folder of piagent's own the registry names under ~/.pi, whatever it is
// (a new entry is purged without a list to keep in step), except the
// person's own tool policy; a file beside them that the registry does not
// name stays.
func TestPurgeWalksTheRegistry(t *testing.T) {
	t.Parallel()
	w := newSetupWorld(t)
	if _, errs, code := w.run("", false, "setup"); code != 0 {
		t.Fatalf("setup: exit %d\n%s", code, errs)
	}
	dotpi := filepath.Join(w.home, ".pi")
	var own []registry.Entry
	for _, e := range registry.List(registry.Input{Home: w.home}) {
		if e.Owner != registry.Piagent || e.Path == dotpi || !paths.Within(dotpi, e.Path) {
			continue
		}
		own = append(own, e)
		p := e.Path
		if e.Dir {
			p = filepath.Join(e.Path, "x")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if len(own) < 10 {
		t.Fatalf("the registry names %d entries of piagent's under ~/.pi: %v", len(own), own)
	}
	beside := filepath.Join(dotpi, "piagent-not-ours.json")
	if err := os.WriteFile(beside, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := w.run("", false, "uninstall", "--purge", "--yes"); code != 0 {
		t.Fatalf("purge: exit %d\n%s", code, errs)
	}
	for _, e := range own {
		_, err := os.Lstat(e.Path)
		switch {
		case e.Path == registry.UserPolicy(w.home) && err != nil:
			t.Errorf("the person's policy %s was removed", e.Path)
		case e.Path != registry.UserPolicy(w.home) && err == nil:
			t.Errorf("%s (%s) is still there after --purge", e.Path, e.What)
		}
	}
	if _, err := os.Stat(beside); err != nil {
		t.Errorf("a file the registry does not name was removed: %v", err)
	}
}
