package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/piagent/piagent/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

const helperEnv = "PIAGENT_APPROVAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain runs in a child process: it waits for the start file, then
// approves one server (PIAGENT_APPROVAL_TEST_HELPER=<store>|<project>|<server>|<start file>).
func helperMain() int {
	parts := strings.Split(os.Getenv(helperEnv), "|")
	if len(parts) != 4 {
		fmt.Fprintln(os.Stderr, "bad helper spec")
		return 2
	}
	store, proj, server, start := parts[0], parts[1], parts[2], parts[3]
	deadline := time.Now().Add(testenv.Slow(30 * time.Second))
	for {
		if _, err := os.Stat(start); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "start file never appeared")
			return 3
		}
		time.Sleep(time.Millisecond)
	}
	err := Open(store).Update(func(d *Data) error {
		d.Set(proj, server, Decision{Decision: Approved, Digest: "sha256:" + server, DecidedAt: "2026-01-01T00:00:00Z"})
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func newHelper(store, proj, server, start string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+store+"|"+proj+"|"+server+"|"+start)
	return cmd
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func approve(server string) func(*Data) error {
	return func(d *Data) error {
		d.Set("/p", server, Decision{Decision: Approved, Digest: "sha256:1", DecidedAt: "2026-01-01T00:00:00Z"})
		return nil
	}
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("testdata/unknown.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "approvals.json")
	write(t, path, string(in))
	s := Open(path)
	err = s.Update(func(d *Data) error {
		// Get-modify-Set keeps the decision's unknown members.
		dec, ok := d.Get("/home/ada/src/app", "docs")
		if !ok {
			t.Fatal("docs not loaded")
		}
		dec.Decision = Approved
		d.Set("/home/ada/src/app", "docs", dec)
		d.Set("/home/ada/src/other", "fresh", Decision{
			Decision: Approved, Digest: "sha256:00", DecidedAt: "2026-02-03T04:05:06Z",
			Files: map[string]string{"b.js": "sha256:bb", "a.js": "sha256:aa"},
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/unknown.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("rewritten store (-golden +got):\n%s", diff)
	}

	// Every unknown value survives as the same JSON value.
	var before, after map[string]any
	json.Unmarshal(in, &before)
	json.Unmarshal(got, &after)
	for _, k := range []string{"x-written-by", "settings"} {
		if diff := cmp.Diff(before[k], after[k]); diff != "" {
			t.Errorf("top-level %s changed:\n%s", k, diff)
		}
	}
	bp := before["projects"].(map[string]any)["/home/ada/src/app"].(map[string]any)
	ap := after["projects"].(map[string]any)["/home/ada/src/app"].(map[string]any)
	for _, k := range []string{"$meta", "$count", "internal"} {
		if diff := cmp.Diff(bp[k], ap[k]); diff != "" {
			t.Errorf("project member %s changed:\n%s", k, diff)
		}
	}
	if n := ap["docs"].(map[string]any)["note"]; n != nil {
		t.Errorf("docs.note = %v, want null kept", n)
	}
	if _, ok := ap["docs"].(map[string]any)["note"]; !ok {
		t.Errorf("docs.note dropped")
	}
	if !bytes.Contains(got, []byte("12345678901234567890")) {
		t.Errorf("big number lost its text")
	}

	// A second load sees the same data, and a no-change update writes nothing.
	fi1, _ := os.Stat(path)
	if err := s.Update(func(*Data) error { return nil }); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi1, fi2) {
		t.Errorf("a no-change update rewrote the file")
	}
}

func TestLoadDecisions(t *testing.T) {
	t.Parallel()
	d, err := Open("testdata/unknown.json").Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/home/ada/src/app"}, d.Projects()); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"docs", "internal"}, d.Servers("/home/ada/src/app")); diff != "" {
		t.Error(diff)
	}
	got, ok := d.Get("/home/ada/src/app", "docs")
	if !ok {
		t.Fatal("docs missing")
	}
	want := Decision{
		Decision:  Rejected,
		Digest:    "sha256:42531492f90661e826f639638209c8e2178c16aafe819cbb5b35a2417309aaeb",
		DecidedAt: "2026-01-02T03:04:05Z",
		Files:     map[string]string{"tools/server.js": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Decision{}), ignoreUnknown); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := d.Get("/home/ada/src/app", "$meta"); ok {
		t.Errorf("a non-object project member read as a decision")
	}
	if _, ok := d.Get("/nope", "docs"); ok {
		t.Errorf("decision for an unknown project")
	}
}

var ignoreUnknown = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".unknown"
}, cmp.Ignore())

func TestDataMethods(t *testing.T) {
	t.Parallel()
	var d Data
	if len(d.Projects()) != 0 || d.Delete("/a", "") || d.Delete("/a", "x") {
		t.Fatal("zero Data is not empty")
	}
	files := map[string]string{"a": "sha256:1"}
	d.Set("/a", "x", Decision{Decision: Approved, Files: files})
	d.Set("/a", "y", Decision{Decision: Rejected})
	d.Set("/b", "x", Decision{Decision: Approved})
	files["a"] = "changed"
	got, _ := d.Get("/a", "x")
	if got.Files["a"] != "sha256:1" {
		t.Errorf("Set kept a reference to the caller's map")
	}
	got.Files["a"] = "changed"
	if again, _ := d.Get("/a", "x"); again.Files["a"] != "sha256:1" {
		t.Errorf("Get returned the stored map")
	}
	if diff := cmp.Diff([]string{"/a", "/b"}, d.Projects()); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"/b"}, d.Stale(func(p string) bool { return p == "/a" })); diff != "" {
		t.Error(diff)
	}
	if d.Delete("/a", "nope") {
		t.Error("deleted a missing server")
	}
	if !d.Delete("/a", "x") || !d.Delete("/a", "y") {
		t.Error("delete failed")
	}
	if diff := cmp.Diff([]string{"/b"}, d.Projects()); diff != "" {
		t.Errorf("empty project kept: %s", diff)
	}
	if !d.Delete("/b", "") || len(d.Projects()) != 0 {
		t.Error("whole-project delete failed")
	}
}

func TestCorruptStoreIsNeverOverwritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		content   string
		line, col int // 0: a type error, no position
		msg       string
	}{
		{"syntax", "{\n  \"schemaVersion\": 1,\n  \"projects\": {,}\n}\n", 3, 16, "invalid character ','"},
		{"trailing comma", "{\"schemaVersion\": 1,}", 1, 21, "invalid character '}'"},
		{"truncated", "{\"schemaVersion\": 1, \"projects\": {", 1, 34, "unexpected end"},
		{"empty file", "", 1, 1, "unexpected end"},
		{"trailing data", "{\"schemaVersion\": 1}\n{}", 2, 1, "after top-level value"},
		{"invalid utf-8", "{\"schemaVersion\": 1, \"x\": \"\n\xff\"}", 2, 1, "invalid utf-8"},
		{"top-level array", `[]`, 0, 0, "top level"},
		{"top-level null", `null`, 0, 0, "top level"},
		{"schema 2", `{"schemaVersion": 2, "projects": {}}`, 0, 0, "schemaVersion 2 is not supported"},
		{"schema string", `{"schemaVersion": "1", "projects": {}}`, 0, 0, "schemaVersion: want a number"},
		{"schema missing", `{"projects": {}}`, 0, 0, "schemaVersion is missing"},
		{"projects array", `{"schemaVersion": 1, "projects": []}`, 0, 0, "projects: want an object"},
		{"projects null", `{"schemaVersion": 1, "projects": null}`, 0, 0, "projects: want an object"},
		{"project string", `{"schemaVersion": 1, "projects": {"/p": "x"}}`, 0, 0, `projects["/p"]: want an object`},
		{"decision number", `{"schemaVersion": 1, "projects": {"/p": {"s": {"decision": 1}}}}`, 0, 0, `projects["/p"]["s"].decision: want a string`},
		{"digest null", `{"schemaVersion": 1, "projects": {"/p": {"s": {"digest": null}}}}`, 0, 0, "digest: want a string"},
		{"files array", `{"schemaVersion": 1, "projects": {"/p": {"s": {"files": []}}}}`, 0, 0, "files: want an object"},
		{"file digest number", `{"schemaVersion": 1, "projects": {"/p": {"s": {"files": {"a": 1}}}}}`, 0, 0, `files["a"]: want a string`},
		{"off string", `{"schemaVersion": 1, "projects": {"/p": {"s": {"off": "true"}}}}`, 0, 0, "off: want true or false"},
		{"off null", `{"schemaVersion": 1, "projects": {"/p": {"s": {"off": null}}}}`, 0, 0, "off: want true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "approvals.json")
			write(t, path, tt.content)
			_, err := Open(path).Load()
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Load: got %v, want a *CorruptError", err)
			}
			if ce.Path != path || ce.Line != tt.line || ce.Column != tt.col {
				t.Errorf("got %s:%d:%d, want %s:%d:%d", ce.Path, ce.Line, ce.Column, path, tt.line, tt.col)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not name the path and %q", err, tt.msg)
			}
			if tt.line > 0 && !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:%d: ", path, tt.line, tt.col)) {
				t.Errorf("error %q lacks path:line:column", err)
			}
			uerr := Open(path).Update(approve("x"))
			if !errors.As(uerr, &ce) {
				t.Errorf("Update: got %v, want a *CorruptError", uerr)
			}
			assertUntouched(t, dir, path, tt.content)
		})
	}
}

// assertUntouched checks that path still holds content and that no
// temporary file was left beside it.
func assertUntouched(t *testing.T, dir, path, content string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("store was rewritten: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(path) && n != filepath.Base(path)+".lock" {
			t.Errorf("left behind: %s", n)
		}
	}
}

func TestTooLargeIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "approvals.json")
	// Valid JSON just over the cap: the size alone refuses it.
	big := `{"schemaVersion": 1, "pad": "` + strings.Repeat("x", MaxSize) + `"}`
	write(t, path, big)
	if _, err := Open(path).Load(); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) {
		t.Errorf("Load: got %v, want ErrTooLarge naming the path", err)
	}
	if err := Open(path).Update(approve("x")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Update: got %v, want ErrTooLarge", err)
	}
	assertUntouched(t, dir, path, big)

	// Exactly at the cap is fine.
	exact := `{"schemaVersion": 1, "pad": "`
	exact += strings.Repeat("x", MaxSize-len(exact)-2) + `"}`
	path2 := filepath.Join(t.TempDir(), "approvals.json")
	write(t, path2, exact)
	if _, err := Open(path2).Load(); err != nil {
		t.Errorf("a store of exactly MaxSize bytes: %v", err)
	}
}

func TestNotRegularIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "a-dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	linkToDir := filepath.Join(dir, "link-to-dir")
	if err := os.Symlink(sub, linkToDir); err != nil {
		t.Fatal(err)
	}
	paths := []string{sub, linkToDir}
	paths = append(paths, specialFiles(t, dir)...)
	for _, p := range paths {
		if _, err := Open(p).Load(); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Load(%s): got %v, want ErrNotRegular naming the path", p, err)
		}
		if err := Open(p).Update(approve("x")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Update(%s): got %v, want ErrNotRegular", p, err)
		}
	}
	if fi, err := os.Lstat(linkToDir); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link to a directory was replaced")
	}
}

func TestSymlinkToRegularFileIsFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "approvals.json")
	os.Mkdir(filepath.Dir(target), 0o700)
	write(t, target, `{"schemaVersion": 1, "projects": {}}`)
	link := filepath.Join(dir, "home", ".pi", "piagent-mcp-approvals.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Open(link).Update(approve("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	d, err := Open(target).Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get("/p", "x"); !ok {
		t.Errorf("decision not written through the link")
	}
}

func TestNewStoreModes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	path := filepath.Join(home, ".pi", "piagent-mcp-approvals.json")
	s := Open(path)
	if d, err := s.Load(); err != nil || len(d.Projects()) != 0 {
		t.Fatalf("missing store: %v, %v", d, err)
	}
	// Nothing to record on a missing store writes nothing.
	if err := s.Update(func(*Data) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty update created the store: %v", err)
	}
	if err := s.Update(approve("x")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("store mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", di.Mode().Perm())
	}
	// An existing looser mode is tightened on rewrite.
	os.Chmod(path, 0o644)
	if err := s.Update(approve("y")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten store mode %v, want 0600", fi.Mode().Perm())
	}
	want := `{
  "schemaVersion": 1,
  "projects": {
    "/p": {
      "x": {
        "decision": "approved",
        "digest": "sha256:1",
        "decidedAt": "2026-01-01T00:00:00Z"
      },
      "y": {
        "decision": "approved",
        "digest": "sha256:1",
        "decidedAt": "2026-01-01T00:00:00Z"
      }
    }
  }
}
`
	got, _ := os.ReadFile(path)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUpdateErrorWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "approvals.json")
	content := `{"schemaVersion": 1}`
	write(t, path, content)
	boom := errors.New("boom")
	err := Open(path).Update(func(d *Data) error {
		d.Set("/p", "x", Decision{Decision: Approved})
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
	assertUntouched(t, dir, path, content)
}

func TestZeroStore(t *testing.T) {
	t.Parallel()
	if _, err := (&Store{}).Load(); err == nil {
		t.Error("Load on a zero Store succeeded")
	}
	if err := (&Store{}).Update(approve("x")); err == nil {
		t.Error("Update on a zero Store succeeded")
	}
}

func TestProjectKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "checkout")
	os.Mkdir(real, 0o700)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{real, link, link + "/", real + "/./"} {
		got, err := ProjectKey(in)
		if err != nil || got != want {
			t.Errorf("ProjectKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ProjectKey("relative/dir"); !errors.Is(err, ErrRelative) {
		t.Errorf("relative: got %v, want ErrRelative", err)
	}
	if _, err := ProjectKey(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: got %v, want ErrNotExist", err)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".pi", "approvals.json")
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- Open(path).Update(approve(fmt.Sprintf("srv-%02d", i)))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkAll(t, path, "/p", n)
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 16 processes")
	}
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "home", ".pi", "piagent-mcp-approvals.json")
	start := filepath.Join(dir, "start")
	const n = 16
	procs := make([]*os.Process, 0, n)
	outs := make([]*bytes.Buffer, n)
	for i := range n {
		cmd := newHelper(path, "/p", fmt.Sprintf("srv-%02d", i), start)
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd.Process)
	}
	write(t, start, "go")
	for i, p := range procs {
		st, err := p.Wait()
		if err != nil || !st.Success() {
			t.Errorf("helper %d: %v %v: %s", i, err, st, outs[i])
		}
	}
	checkAll(t, path, "/p", n)
}

func checkAll(t *testing.T, path, proj string, n int) {
	t.Helper()
	d, err := Open(path).Load()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("srv-%02d", i))
	}
	if diff := cmp.Diff(want, d.Servers(proj)); diff != "" {
		t.Errorf("decisions after concurrent approvals (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func FuzzLoad(f *testing.F) {
	seed, _ := os.ReadFile("testdata/unknown.json")
	f.Add(seed)
	f.Add([]byte(`{"schemaVersion": 1}`))
	f.Add([]byte(`{"schemaVersion": 1, "projects": {"/p": {"s": {"decision": "approved", "files": {}}, "k": [1]}}}`))
	f.Add([]byte(`{"schemaVersion": 1.0, "projects": {"/p": {}}, "x": {"a": "<\u003c>"}}`))
	f.Add([]byte(`{"schemaVersion": 2}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parse("fuzz.json", data)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != "fuzz.json" {
				t.Fatalf("parse error is not a *CorruptError naming the path: %v", err)
			}
			return
		}
		out, err := d.marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		d2, err := parse("fuzz.json", out)
		if err != nil {
			t.Fatalf("saved store does not load: %v\n%s", err, out)
		}
		if diff := cmp.Diff(d, d2, cmp.AllowUnexported(Data{}, project{}, Decision{}), cmp.Comparer(jsonEqual),
			cmp.FilterValues(func(x, y any) bool { _, raw := x.(json.RawMessage); return !raw }, cmpopts.EquateEmpty())); diff != "" {
			t.Fatalf("round trip changed the store (-loaded +reloaded):\n%s", diff)
		}
		out2, _ := d2.marshal()
		if !bytes.Equal(out, out2) {
			t.Fatalf("save is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}

// jsonEqual compares raw JSON values by meaning (the store re-indents them).
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func TestUnknownValuesOfKnownFieldsLoad(t *testing.T) {
	t.Parallel()
	// A newer tool's decision value is not a reason to refuse the store; it
	// just is not Approved.
	d, err := parse("s.json", []byte(`{"schemaVersion": 1e0, "projects": {"/p": {"s": {"decision": "approved-once", "digest": "md5:x"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	dec, ok := d.Get("/p", "s")
	if !ok || dec.Decision != "approved-once" || dec.Digest != "md5:x" || dec.Files != nil {
		t.Errorf("got %+v, %v", dec, ok)
	}
}

func BenchmarkLoad(b *testing.B) {
	d := &Data{}
	for i := range 1000 {
		d.Set("/home/ada/src/app", fmt.Sprintf("srv-%04d", i), Decision{
			Decision: Approved, Digest: "sha256:a06d091d0a5d206fdff3fcacb0b12ec9e0dbfbde28b978e7c09b0bb48175d029",
			DecidedAt: "2026-01-02T03:04:05Z", Files: map[string]string{"tools/server.js": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		})
	}
	out, err := d.marshal()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "approvals.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		b.Fatal(err)
	}
	s := Open(path)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzMembers checks the one-pass walker against encoding/json on every
// object nested in valid input.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, {"c": "}"}], "d\"": "\\"}, "e" : null , "a": 2}`))
	f.Add([]byte(` { } `))
	f.Add([]byte(`[{"x": -1.5e3}, {"y": true}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) { // parse refuses invalid UTF-8 first
			return
		}
		var check func(raw []byte)
		check = func(raw []byte) {
			raw = trim(raw)
			if end := skipValue(raw, 0); end != len(raw) {
				t.Fatalf("skipValue(%s) = %d, want %d", raw, end, len(raw))
			}
			switch raw[0] {
			case '{':
				var want map[string]json.RawMessage
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				got := map[string]json.RawMessage{}
				if err := members(raw, func(k string, v json.RawMessage) error {
					got[k] = v
					return nil
				}); err != nil {
					t.Fatalf("members(%s): %v", raw, err)
				}
				if diff := cmp.Diff(want, got, cmp.Comparer(jsonEqual)); diff != "" {
					t.Fatalf("members(%s) (-json +walker):\n%s", raw, diff)
				}
				for _, v := range got {
					check(v)
				}
			case '[':
				var elems []json.RawMessage
				if err := json.Unmarshal(raw, &elems); err != nil {
					t.Fatal(err)
				}
				for _, e := range elems {
					check(e)
				}
			case '"':
				var want string
				json.Unmarshal(raw, &want)
				if got, err := unquote(raw); err != nil || got != want {
					t.Fatalf("unquote(%s) = %q, %v; want %q", raw, got, err, want)
				}
			}
		}
		check(data)
	})
}

// TestOffRoundTrip: the person's switch ("off": true) is read, written back,
// and a record that held only the switch is Empty once it is cleared.
func TestOffRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "approvals.json")
	write(t, path, `{"schemaVersion": 1, "projects": {"/p": {"s": {"decision": "approved", "digest": "sha256:x", "off": true}, "t": {"off": false}}}}`)
	s := Open(path)
	d, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if dec, _ := d.Get("/p", "s"); !dec.Off || dec.Decision != Approved {
		t.Errorf("s: %+v, want approved and off", dec)
	}
	if dec, _ := d.Get("/p", "t"); dec.Off || !dec.Empty() {
		t.Errorf("t: %+v, want on and empty", dec)
	}
	if err := s.Update(func(d *Data) error { return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"off": true`) || strings.Count(string(data), `"off"`) != 1 {
		t.Errorf("written back:\n%s", data)
	}
}
