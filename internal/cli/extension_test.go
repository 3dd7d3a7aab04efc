package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	piext "github.com/piagent/piagent/extensions/pi"
	"github.com/piagent/piagent/internal/ops"
)

func runExtensionPath(t *testing.T, home string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main("piagent", []string{"extension", "path"}, Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Home: home, Dir: t.TempDir(), Now: time.Now,
	})
	return out.String(), errb.String(), code
}

// snapshot reads every file under dir with its mode and modification time.
type fileInfo struct {
	Data    string
	Mode    fs.FileMode
	ModTime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileInfo {
	t.Helper()
	out := map[string]fileInfo{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fileInfo{string(data), fi.Mode(), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func embedded(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(piext.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(piext.Files(), p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExtensionPath(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	want := filepath.Join(home, ".pi", "piagent", "extension", Version)

	stdout, stderr, code := runExtensionPath(t, home)
	if code != 0 || stderr != "" || stdout != want+"\n" {
		t.Fatalf("first run: code %d, stdout %q, stderr %q; want 0, %q, empty", code, stdout, stderr, want+"\n")
	}
	first := snapshot(t, want)
	got := map[string]string{}
	for p, fi := range first {
		got[p] = fi.Data
		if fi.Mode.Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, fi.Mode.Perm())
		}
	}
	if diff := cmp.Diff(embedded(t), got); diff != "" {
		t.Errorf("written files differ from the embedded ones (-embedded +written):\n%s", diff)
	}
	for d, i := want, 0; i < 3; d, i = filepath.Dir(d), i+1 {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}

	// A second run writes nothing: same content, same modification times.
	time.Sleep(10 * time.Millisecond)
	stdout, _, code = runExtensionPath(t, home)
	if code != 0 || stdout != want+"\n" {
		t.Fatalf("second run: code %d, stdout %q", code, stdout)
	}
	if diff := cmp.Diff(first, snapshot(t, want)); diff != "" {
		t.Errorf("second run changed files (-first +second):\n%s", diff)
	}
}

// TestExtensionVersion: the binary carries the extension of its own version.
func TestExtensionVersion(t *testing.T) {
	if piext.Version != Version {
		t.Errorf("embedded extension is %s, the binary is %s: bump extensions/pi/package.json and piext.Version together with ops.Version", piext.Version, Version)
	}
}

func TestWriteExtensionRepairs(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".pi", "piagent", "extension", piext.Version)
	if _, err := ops.WriteExtension(piext.Files(), dir); err != nil {
		t.Fatal(err)
	}
	// A changed file, a deleted file and a symlink in place of a file are all rewritten.
	if err := os.WriteFile(filepath.Join(dir, "index.ts"), []byte("export default () => {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "helper.ts")); err != nil {
		t.Fatal(err)
	}
	decoy := filepath.Join(t.TempDir(), "guard.ts")
	data, _ := fs.ReadFile(piext.Files(), "guard.ts")
	if err := os.WriteFile(decoy, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "guard.ts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(decoy, filepath.Join(dir, "guard.ts")); err != nil {
		t.Fatal(err)
	}
	written, err := ops.WriteExtension(piext.Files(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"guard.ts", "helper.ts", "index.ts"}, written); diff != "" {
		t.Errorf("rewritten files (-want +got):\n%s", diff)
	}
	fi, err := os.Lstat(filepath.Join(dir, "guard.ts"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Errorf("guard.ts is still not a regular file: %v %v", fi, err)
	}
	written, err = ops.WriteExtension(piext.Files(), dir)
	if err != nil || len(written) != 0 {
		t.Errorf("third run wrote %v (err %v), want nothing", written, err)
	}
}
