package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/ops"
)

// runCLI runs one command line in-process with a fake home.
func runCLI(t *testing.T, name, home, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, Home: home,
		Environ: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, Now: func() time.Time { return time.Unix(0, 0) }}
	code = Main(name, args, env)
	return out.String(), errb.String(), code
}

func fixture(t *testing.T) (home, proj string) {
	home, proj = t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "mcp"), 0o755)
	os.WriteFile(filepath.Join(home, ".config", "mcp", "mcp.json"), []byte(`{"mcpServers": {"mine": {"url": "https://m.example/mcp"}}}`), 0o644)
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers": {"repo": {"command": "node", "args": ["x.js"]}}}`), 0o644)
	return home, proj
}

// TestListJSONFields pins the --json contract: these fields exist with these
// names; new ones may be added, never renamed.
func TestListJSONFields(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	out, errs, code := runCLI(t, "piagent-mcp", home, proj, "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"project", "servers", "skipped", "blocks", "fullBlock", "exclusive"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("list --json lacks top-level %q", k)
		}
	}
	servers := doc["servers"].([]any)
	if len(servers) != 2 {
		t.Fatalf("servers: %v", servers)
	}
	for _, s := range servers {
		m := s.(map[string]any)
		for _, k := range []string{"name", "scope", "layer", "state", "reason", "transport", "target", "source", "repositoryControlled", "adapterLoads"} {
			if _, ok := m[k]; !ok {
				t.Errorf("server %v lacks %q", m["name"], k)
			}
		}
		src := m["source"].(map[string]any)
		if _, ok := src["file"]; !ok {
			t.Errorf("source lacks file")
		}
		// issue 23, item 8: a server declared directly carries no "kind": ""
		if k, ok := src["kind"]; ok {
			t.Errorf("source of a directly declared server has kind %q", k)
		}
		if m["name"] == "repo" && (m["repositoryReason"] == nil || m["digest"] == nil || m["state"] != "pending-approval") {
			t.Errorf("repository server row: %v", m)
		}
	}
}

// TestDoctorJSONFields pins doctor --json the same way.
func TestDoctorJSONFields(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	out, _, code := runCLI(t, "piagent-mcp", home, proj, "doctor", "--json")
	if code != 1 {
		t.Errorf("doctor with a pending repository server: exit %d, want 1", code)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"servers", "skipped", "blocks", "imports", "importTargets", "warnings", "docker", "attention"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("doctor --json lacks %q", k)
		}
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, errs, code := runCLI(t, "piagent-mcp", home, proj, "completion", shell)
		if code != 0 || !strings.Contains(out, "piagent-mcp") {
			t.Errorf("completion %s: exit %d %s", shell, code, errs)
		}
	}
	// server names for approve: repository servers only
	out, _, _ := runCLI(t, "piagent-mcp", home, proj, "__complete", "approve", "")
	lines := strings.Split(out, "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "repo") }) || strings.Contains(out, "mine") {
		t.Errorf("approve completion: %q", out)
	}
	out, _, _ = runCLI(t, "piagent-mcp", home, proj, "__complete", "get", "")
	if !strings.Contains(out, "mine") || !strings.Contains(out, "repo") {
		t.Errorf("get completion: %q", out)
	}
	out, _, _ = runCLI(t, "piagent", home, proj, "__complete", "mcp", "")
	for _, sub := range []string{"list", "get", "doctor", "approve", "reject", "reset", "notice"} {
		if !strings.Contains(out, sub) {
			t.Errorf("subcommand completion lacks %s: %q", sub, out)
		}
	}
}

// TestBothNames: piagent mcp and piagent-mcp are the same commands, and
// errors carry the name the user typed.
func TestBothNames(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	a, _, ca := runCLI(t, "piagent-mcp", home, proj, "list")
	b, _, cb := runCLI(t, "piagent", home, proj, "mcp", "list")
	if a != b || ca != cb {
		t.Errorf("piagent-mcp list and piagent mcp list differ:\n%s\n%s", a, b)
	}
	_, errs, code := runCLI(t, "piagent", home, proj, "mcp", "get")
	if code != 2 || !strings.HasPrefix(errs, "piagent: error: ") {
		t.Errorf("usage error: exit %d %q", code, errs)
	}
	// Not found is 1, as in gh (issue 42): the usage was right.
	_, errs, code = runCLI(t, "piagent-mcp", home, proj, "get", "nosuch")
	if code != 1 || !strings.HasPrefix(errs, "piagent-mcp: error: ") {
		t.Errorf("unknown server: exit %d %q", code, errs)
	}
	_, errs, code = runCLI(t, "piagent-mcp", home, proj, "list", "--bogus")
	if code != 2 || !strings.Contains(errs, "unknown flag") {
		t.Errorf("bad flag: exit %d %q", code, errs)
	}
	out, _, _ := runCLI(t, "piagent", home, proj, "mcp", "doctor")
	if !strings.Contains(out, "piagent mcp approve repo") {
		t.Errorf("hints use the name typed: %q", out)
	}
}

// TestDoctorDocker: `docker info` runs in doctor only, and only when a
// server needs Docker (ops.DockerAnswers, its one owner); doctor shows the
// first line Docker wrote. A docker on the person's PATH counts its runs.
func TestDoctorDocker(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	os.WriteFile(filepath.Join(bin, "docker"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\necho 'Cannot connect to the Docker daemon' >&2\necho 'second line' >&2\nexit 1\n"), 0o755)
	ran := func() int {
		data, _ := os.ReadFile(calls)
		return strings.Count(string(data), "info --format {{.ServerVersion}}\n")
	}
	home, proj := fixture(t)
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: proj, Home: home,
			Environ: []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH")}, Now: func() time.Time { return time.Unix(0, 0) }}
		Main("piagent-mcp", args, env)
		return out.String()
	}
	run("doctor")
	run("list")
	if n := ran(); n != 0 {
		t.Fatalf("docker info ran %d times without a Docker server", n)
	}
	os.WriteFile(filepath.Join(home, ".config", "mcp", "mcp.json"),
		[]byte(`{"mcpServers": {"gh": {"command": "docker", "args": ["run", "-i", "img@sha256:00"]}}}`), 0o644)
	run("list")
	if ran() != 0 {
		t.Fatalf("list ran docker info")
	}
	out := run("doctor", "--json")
	if n := ran(); n != 1 || !strings.Contains(out, `"checked": true`) || !strings.Contains(out, `"running": false`) || !strings.Contains(out, `"gh"`) ||
		!strings.Contains(out, `"error": "Cannot connect to the Docker daemon"`) {
		t.Fatalf("doctor with a Docker server: %d calls\n%s", n, out)
	}
	if out := run("doctor"); !strings.Contains(out, "\ndocker: not available (Cannot connect to the Docker daemon); needed by gh: start Docker\n") {
		t.Fatalf("doctor's words for Docker:\n%s", out)
	}
}

// A write the file system refuses gets words about the file system, not the
// command's own hints about repairing a file (issue 23, item 6).
func TestReportFileSystemRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"read-only mkdir", refused(fmt.Errorf("cannot record: %w", &fs.PathError{Op: "mkdir", Path: "/h/.pi", Err: syscall.EROFS}), "repair or move it"),
			"hint: /h/.pi is on a read-only file system"},
		{"read-only rename", &os.LinkError{Op: "rename", Old: "/h/.pi/.tmp1", New: "/h/.pi/x.json", Err: syscall.EROFS},
			"hint: /h/.pi/x.json is on a read-only file system"},
		{"permission", refused(&fs.PathError{Op: "chmod", Path: "/h/.pi/x.json", Err: syscall.EACCES}, "repair or move it"),
			"hint: check the owner and mode of /h/.pi (ls -ld /h/.pi)"},
		// issue 40, item 8: a full disk is not a file to repair
		{"full disk", refused(fmt.Errorf("cannot record the decision: %w", &fs.PathError{Op: "write", Path: "/h/.pi/.x.tmp", Err: syscall.ENOSPC}),
			storeHints("/h/.pi/x.json", &fs.PathError{Op: "write", Path: "/h/.pi/.x.tmp", Err: syscall.ENOSPC})...),
			"hint: the file system holding /h/.pi/.x.tmp is full: nothing was changed"},
	} {
		var b strings.Builder
		if code := report(&b, "piagent", tc.err); code != exitAttention {
			t.Errorf("%s: exit %d, want %d", tc.name, code, exitAttention)
		}
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "repair or move") {
			t.Errorf("%s: report printed\n%s\nwant %q and no 'repair or move'", tc.name, b.String(), tc.want)
		}
	}
	var b strings.Builder
	report(&b, "piagent", refused(errors.New("store unreadable"), "repair or move it"))
	if !strings.Contains(b.String(), "hint: repair or move it") {
		t.Errorf("other errors keep their hints; got\n%s", b.String())
	}
}

// TestApproveDeclined: answering no at approve's prompt is a cancel, exit 3
// (issue 42), and records nothing; yes approves.
func TestApproveDeclined(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	ask := func(answer string) (string, int) {
		var out, errb bytes.Buffer
		env := Env{Stdin: strings.NewReader(answer), Stdout: &out, Stderr: &errb, Dir: proj, Home: home,
			Environ: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, Now: func() time.Time { return time.Unix(0, 0) },
			Interactive: true}
		code := Main("piagent-mcp", []string{"approve", "repo"}, env)
		return errb.String(), code
	}
	store := filepath.Join(home, ".pi", "piagent-mcp-approvals.json")
	for _, answer := range []string{"n\n", "", "whatever\n"} {
		errs, code := ask(answer)
		if code != exitCancelled || !strings.Contains(errs, "error: not approved: repo stays") {
			t.Errorf("answer %q: exit %d\n%s", answer, code, errs)
		}
		if _, err := os.Stat(store); err == nil {
			t.Fatalf("answer %q wrote the store", answer)
		}
	}
	if errs, code := ask("y\n"); code != 0 {
		t.Fatalf("answer y: exit %d\n%s", code, errs)
	}
}

// TestHelperTakesTheLongLivedPace: the guard helper asks for the long-lived
// collector pace through Env.LongLived (the mains set it; a test's Env
// does not, so no test binary's collector is changed), and a one-shot
// command does not.
func TestHelperTakesTheLongLivedPace(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"guard", "serve"}, 1},
		{[]string{"mcp", "list"}, 0},
	} {
		calls := 0
		var out, errb bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: proj, Home: home,
			Environ: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, Now: func() time.Time { return time.Unix(0, 0) },
			LongLived: func() ops.Pace { calls++; return nil }}
		Main("piagent", tc.args, env)
		if calls != tc.want {
			t.Errorf("piagent %v: LongLived called %d times, want %d\n%s", tc.args, calls, tc.want, errb.String())
		}
	}
}
