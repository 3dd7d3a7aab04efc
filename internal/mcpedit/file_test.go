package mcpedit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

func setA(d *Doc) error { return d.SetServer("a", []byte(`{"command":"a"}`)) }

func TestUpdateNewFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "deep", "er", "mcp.json")
	res, err := Update(path, Options{Mode: 0o600, DirMode: 0o700}, setA)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Existed || res.Path != path {
		t.Errorf("result = %+v", res)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v", di.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	want := "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"a\"\n    }\n  }\n}\n"
	if string(data) != want {
		t.Errorf("file =\n%s\nwant\n%s", data, want)
	}
	// Nothing is left behind but the file: the lock exists only while held.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want the file alone", len(entries))
	}
	// A second identical edit changes nothing.
	res, err = Update(path, Options{}, setA)
	if err != nil || res.Changed {
		t.Errorf("second Update = %+v, %v", res, err)
	}
}

func TestUpdateKeepsMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte("{}"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Update(path, Options{Mode: 0o600}, setA); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
}

func TestUpdateRefusesBrokenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	broken := "{\n  \"mcpServers\": {\n    \"a\": \n}\n"
	os.WriteFile(path, []byte(broken), 0o644)
	_, err := Update(path, Options{}, setA)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != path || fe.Line != 4 {
		t.Fatalf("err = %v, want a FileError at line 4 of %s", err, path)
	}
	if want := fmt.Sprintf("%s:4:1: ", path); len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("message %q does not start with %q", err, want)
	}
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Errorf("broken file was changed:\n%s", data)
	}
}

func TestUpdateDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "mcp.json")
	res, err := Update(path, Options{DryRun: true}, setA)
	if err != nil || !res.Changed || len(res.After) == 0 {
		t.Fatalf("dry run = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created the folder: %v", err)
	}
}

func TestUpdateEditError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte("{}"), 0o644)
	boom := errors.New("boom")
	_, err := Update(path, Options{}, func(d *Doc) error { setA(d); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{}" {
		t.Errorf("file changed: %s", data)
	}
}

func TestUpdateNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Update(dir, Options{}, setA); !errors.Is(err, ErrNotRegular) {
		t.Errorf("folder: err = %v", err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := Update(fifo, Options{}, setA); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: err = %v", err)
	}
}

func TestUpdateSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	os.MkdirAll(filepath.Join(project, ".pi"), 0o755)
	outside := filepath.Join(dir, "outside.json")
	os.WriteFile(outside, []byte("{}"), 0o644)

	// A repository file that leads out of the repository is refused.
	link := filepath.Join(project, ".mcp.json")
	os.Symlink(outside, link)
	if _, err := Update(link, Options{Within: project}, setA); !errors.Is(err, ErrOutside) {
		t.Errorf("link out of the project: err = %v", err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "{}" {
		t.Errorf("outside file changed: %s", data)
	}
	// Without Within the link is written through and stays a link.
	res, err := Update(link, Options{}, setA)
	if err != nil || res.Path != outside {
		t.Fatalf("write through: %+v, %v", res, err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	// A link inside the project is fine.
	inner := filepath.Join(project, ".pi", "mcp.json")
	os.WriteFile(filepath.Join(project, "real.json"), []byte("{}"), 0o644)
	os.Symlink(filepath.Join(project, "real.json"), inner)
	if _, err := Update(inner, Options{Within: project}, setA); err != nil {
		t.Errorf("link inside the project: %v", err)
	}
	// A dangling link is refused.
	dangling := filepath.Join(project, "dangling.json")
	os.Symlink(filepath.Join(dir, "nope", "x.json"), dangling)
	if _, err := Update(dangling, Options{}, setA); err == nil {
		t.Error("dangling link accepted")
	}
}

// TestUpdateConcurrent: writers holding the lock never drop one another's
// servers.
func TestUpdateConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Update(path, Options{}, func(d *Doc) error {
				return d.SetServer(fmt.Sprintf("s%02d", i), []byte(`{"command":"x"}`))
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	d, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(d.Names()); got != n {
		t.Errorf("%d servers survived, want %d:\n%s", got, n, data)
	}
}

func TestRemoveIfEmpty(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		removed    bool
	}{
		{"only the server", `{"mcpServers": {"a": {"disabled": true}}}`, true},
		{"another server", `{"mcpServers": {"a": {"disabled": true}, "b": {"url": "https://b"}}}`, false},
		{"a setting", `{"mcpServers": {"a": {"disabled": true}}, "settings": {}}`, false},
		{"a comment", "// mine\n{\"mcpServers\": {\"a\": {\"disabled\": true}}}", false},
		{"a trailing comma", `{"mcpServers": {"a": {"disabled": true}},}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, dry := range []bool{true, false} {
				res, err := Update(path, Options{RemoveIfEmpty: true, DryRun: dry}, func(d *Doc) error {
					_, err := d.ClearDisabled("a")
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				_, statErr := os.Stat(path)
				gone := errors.Is(statErr, os.ErrNotExist)
				if res.Removed != tc.removed || gone != (tc.removed && !dry) {
					t.Errorf("dry %v: Removed %v, file gone %v; want removed %v", dry, res.Removed, gone, tc.removed)
				}
			}
		})
	}
}

// TestUpdatePrepare: Prepare runs once the change is known and before it is
// made, seeing exactly what will be written; its error leaves the file as
// it was (a repository add's approval is recorded there, first).
func TestUpdatePrepare(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	var seen []byte
	existedThen := true
	res, err := Update(path, Options{Prepare: func(r Result) (func(), error) {
		seen = r.After
		_, err := os.Stat(path)
		existedThen = err == nil
		return nil, nil
	}}, setA)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(seen) != string(data) || string(res.After) != string(data) {
		t.Errorf("Prepare saw %q; the file holds %q", seen, data)
	}
	if existedThen {
		t.Error("Prepare ran after the file was written")
	}
	refuse := errors.New("no")
	_, err = Update(path, Options{Prepare: func(Result) (func(), error) { return nil, refuse }}, func(d *Doc) error {
		return d.SetServer("b", []byte(`{"command":"b"}`))
	})
	if !errors.Is(err, refuse) {
		t.Errorf("Update = %v, want Prepare's error", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("a refused Prepare changed the file:\n%s", after)
	}
}
