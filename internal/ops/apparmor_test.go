package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppArmorRefusesReplaceableBinary (issue 36): a profile that lets a
// binary make user namespaces is offered only for a binary root alone can
// replace; one in a folder the person (or anyone) may write is refused.
func TestAppArmorRefusesReplaceableBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "piagent")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		// the person's own file: anything the agent writes as them could
		// take its place
		if got := replaceableBy(bin); got != bin {
			t.Errorf("replaceableBy(%s) = %q, want the binary itself", bin, got)
		}
	} else {
		if got := replaceableBy(bin); got != "" {
			t.Errorf("root's binary in root's folders: replaceableBy = %q", got)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if got := replaceableBy(bin); got != dir {
			t.Errorf("a world-writable folder: replaceableBy = %q, want %s", got, dir)
		}
		if err := os.Chown(bin, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if got := replaceableBy(bin); got != bin {
			t.Errorf("another user's binary: replaceableBy = %q", got)
		}
	}
	if got := replaceableBy("/usr/bin/env"); got != "" {
		t.Errorf("/usr/bin/env is root's alone, got %q", got)
	}
	p := apparmorProfile("/usr/local/bin/piagent", "/usr/local/bin/piagent-sandbox")
	for _, want := range []string{"profile piagent /usr/local/bin/piagent flags", "profile piagent-sandbox /usr/local/bin/piagent-sandbox flags", "userns,", "abi <abi/4.0>"} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
}
