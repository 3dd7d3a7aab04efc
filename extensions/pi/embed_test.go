package piext

import (
	"encoding/json"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPackageJSON pins what Pi needs from package.json and that the version
// matches Version.
func TestPackageJSON(t *testing.T) {
	data, err := fs.ReadFile(Files(), "package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Name             string            `json:"name"`
		Version          string            `json:"version"`
		Type             string            `json:"type"`
		Keywords         []string          `json:"keywords"`
		Pi               map[string]any    `json:"pi"`
		Dependencies     map[string]string `json:"dependencies"`
		PeerDependencies map[string]string `json:"peerDependencies"`
		Files            []string          `json:"files"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "@piagent/pi-extension" || pkg.Version != Version || pkg.Type != "module" {
		t.Errorf("name, version, type = %q, %q, %q; want @piagent/pi-extension, %s, module", pkg.Name, pkg.Version, pkg.Type, Version)
	}
	if !slices.Contains(pkg.Keywords, "pi-package") {
		t.Errorf("keywords %v lack pi-package", pkg.Keywords)
	}
	if diff := cmp.Diff(map[string]any{"extensions": []any{"./index.ts"}}, pkg.Pi); diff != "" {
		t.Errorf("pi field (-want +got):\n%s", diff)
	}
	if len(pkg.Dependencies) != 0 {
		t.Errorf("runtime dependencies %v: the extension must have none", pkg.Dependencies)
	}
	for name, r := range pkg.PeerDependencies {
		if r != "*" {
			t.Errorf("peer dependency %s has range %q, want *", name, r)
		}
	}
	// Every embedded file is listed in "files", and the other way round.
	var embedded []string
	fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	})
	slices.Sort(embedded)
	listed := slices.Clone(pkg.Files)
	slices.Sort(listed)
	if diff := cmp.Diff(embedded, listed); diff != "" {
		t.Errorf("package.json files vs embedded files (-embedded +listed):\n%s", diff)
	}
}

// TestImportsAreLocalOrTypes checks that the extension needs nothing at run
// time beyond Node and its own files: imports from Pi's packages are
// type-only (jiti erases them), everything else is node: or ./.
func TestImportsAreLocalOrTypes(t *testing.T) {
	re := regexp.MustCompile(`(?m)^import\s+(type\s+)?[^;]*?from\s+"([^"]+)"`)
	entries, err := fs.Glob(Files(), "*.ts")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range entries {
		data, err := fs.ReadFile(Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			typeOnly, from := m[1] != "", m[2]
			switch {
			case len(from) > 5 && from[:5] == "node:":
			case len(from) > 2 && from[:2] == "./":
				if _, err := fs.Stat(Files(), from[2:]); err != nil {
					t.Errorf("%s imports %s, which is not embedded", name, from)
				}
			case typeOnly:
			default:
				t.Errorf("%s imports %q at run time; only node:, ./ and type imports are allowed", name, from)
			}
		}
	}
}

// TestEmbeddedMatchesFolder guards against a file added to the folder but
// left out of the embed pattern.
func TestEmbeddedMatchesFolder(t *testing.T) {
	for _, name := range []string{"package.json", "index.ts", "helper.ts", "guard.ts", "command.ts"} {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(Files(), name)
		if err != nil {
			t.Fatalf("%s is not embedded: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: embedded copy differs", name)
		}
	}
}
