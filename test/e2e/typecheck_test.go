package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExtensionTypes type-checks the Pi extension (and its unit tests)
// strictly against the declarations of the Pi under test (0.86.1 or 1.6.0), with the TypeScript pinned
// in test/e2e/npm. Pi loads the extension through jiti without checking
// types, so this is the only place a wrong field name or event shape shows
// before a person runs it.
func TestExtensionTypes(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	nm := filepath.Join(deps.npmDir, "node_modules")
	tsc := filepath.Join(nm, "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("typescript is not installed in test/e2e/npm: %v (run scripts/e2e-deps.sh)", err)
	}
	dir := t.TempDir()
	src := filepath.Join(deps.repoRoot, "extensions", "pi")
	copyGlob := func(pattern, dst string) {
		files, _ := filepath.Glob(filepath.Join(src, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(dir, "testdata"), 0o755)
	copyGlob("*.ts", dir)
	copyGlob("package.json", dir)
	copyGlob(filepath.Join("testdata", "*.ts"), filepath.Join(dir, "testdata"))
	copyGlob(filepath.Join("testdata", "transcript.mjs"), filepath.Join(dir, "testdata"))
	// node_modules: the Pi under test and its dependencies, with TypeScript
	// and Node's types from test/e2e/npm.
	piNM := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(deps.piCLI)))))
	if piNM == nm {
		if err := os.Symlink(nm, filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
	} else {
		link := filepath.Join(dir, "node_modules")
		os.MkdirAll(link, 0o755)
		entries, _ := os.ReadDir(piNM)
		for _, e := range entries {
			os.Symlink(filepath.Join(piNM, e.Name()), filepath.Join(link, e.Name()))
		}
		for _, name := range []string{"typescript", "@types"} {
			os.Remove(filepath.Join(link, name))
			if err := os.Symlink(filepath.Join(nm, name), filepath.Join(link, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tsconfig := `{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "strict": true, "noEmit": true, "allowImportingTsExtensions": true, "allowJs": true,
    "skipLibCheck": true, "noUncheckedIndexedAccess": true, "types": ["node"]
  },
  "files": ["index.ts", "testdata/extension.test.ts"]
}`
	os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(tsconfig), 0o644)
	cmd := exec.Command(deps.node, tsc, "-p", "tsconfig.json")
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("tsc --noEmit in %.2fs", time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("the extension does not type-check against Pi %s:\n%s", deps.pi, strings.TrimSpace(string(out)))
	}
}
