package grant

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/registry"
)

func newHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".pi"), 0o700); err != nil {
		t.Fatal(err)
	}
	return home
}

// Grants are kept per project and server, sorted, without duplicates,
// folders cleaned; removing the last one takes the server and the project
// out of the file.
func TestAddAndRemove(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	if g, err := Of(home, "/p", "fs"); err != nil || !reflect.DeepEqual(g, Grant{}) {
		t.Fatalf("no file: %+v %v", g, err)
	}
	g, err := Add(home, "/p", "fs", Grant{Write: []string{"/home/u/notes/", "/home/u/a"}, Env: []string{"GITHUB_TOKEN"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{Write: []string{"/home/u/a", "/home/u/notes"}, Env: []string{"GITHUB_TOKEN"}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("after add: %+v, want %+v", g, want)
	}
	if _, err := Add(home, "/p", "fs", Grant{Write: []string{"/home/u/notes"}, Read: []string{"/data"}}, false); err != nil {
		t.Fatal(err)
	}
	got, err := Of(home, "/p", "fs")
	want.Read = []string{"/data"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read back: %+v %v, want %+v", got, err, want)
	}
	if g, _ := Of(home, "/p", "other"); !reflect.DeepEqual(g, Grant{}) {
		t.Errorf("another server has %+v", g)
	}
	if g, _ := Of(home, "/q", "fs"); !reflect.DeepEqual(g, Grant{}) {
		t.Errorf("the same server in another project has %+v", g)
	}
	for _, r := range []Grant{{Write: []string{"/home/u/a", "/home/u/notes"}}, {Read: []string{"/data"}, Env: []string{"GITHUB_TOKEN"}}} {
		if _, err := Add(home, "/p", "fs", r, true); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(registry.GrantsFile(home))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "/p") || strings.Contains(string(data), "fs") {
		t.Errorf("an empty grant stays in the file:\n%s", data)
	}
	if fi, err := os.Stat(registry.GrantsFile(home)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the grants file is readable by others: %v %v", fi.Mode(), err)
	}
}

// A file piagent did not write the way it writes is refused, not guessed
// at: unknown keys, another version, broken JSON, a file others may write.
func TestRefusedFiles(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"an unknown key":  `{"version": 1, "projects": {}, "everyone": true}`,
		"version 2":       `{"version": 2, "projects": {}}`,
		"broken JSON":     `{"version": 1, "projects": {`,
		"an unknown kind": `{"version": 1, "projects": {"/p": {"fs": {"exec": ["/bin"]}}}}`,
	} {
		home := newHome(t)
		if err := os.WriteFile(registry.GrantsFile(home), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if g, err := Of(home, "/p", "fs"); err == nil {
			t.Errorf("%s: read as %+v", name, g)
		}
		if _, err := Add(home, "/p", "fs", Grant{Write: []string{"/x"}}, false); err == nil {
			t.Errorf("%s: Add wrote over it", name)
		}
		if data, _ := os.ReadFile(registry.GrantsFile(home)); string(data) != body {
			t.Errorf("%s: the file changed to %s", name, data)
		}
	}
	home := newHome(t)
	if err := os.WriteFile(registry.GrantsFile(home), []byte(`{"version": 1, "projects": {"/p": {"fs": {"write": ["/"]}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(registry.GrantsFile(home), 0o666); err != nil {
		t.Fatal(err)
	}
	if g, err := Of(home, "/p", "fs"); err == nil {
		t.Errorf("a grants file every user may write: read as %+v", g)
	}
	// an empty file is no grant
	home = newHome(t)
	if err := os.WriteFile(registry.GrantsFile(home), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if g, err := Of(home, "/p", "fs"); err != nil || !reflect.DeepEqual(g, Grant{}) {
		t.Errorf("an empty file: %+v %v", g, err)
	}
}
