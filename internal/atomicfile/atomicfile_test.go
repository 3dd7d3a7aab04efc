package atomicfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteModeReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, tc := range []struct {
		data string
		mode os.FileMode
	}{{"one", 0o644}, {"two, longer", 0o600}} {
		if err := WriteMode(p, []byte(tc.data), tc.mode); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if string(got) != tc.data || fi.Mode().Perm() != tc.mode {
			t.Errorf("got %q %v, want %q %v", got, fi.Mode().Perm(), tc.data, tc.mode)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := WriteMode(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Error("WriteMode into a missing folder succeeded")
	}
}

// Concurrent Updates lose nothing: each adds one line under the lock.
func TestUpdateLosesNothing(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "sub", "state")
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Update(p, func(old []byte) ([]byte, error) { return append(old, 'x'), nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "xxxxxxxxxxxxxxxxxxxx" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q %v", got, fi.Mode().Perm())
	}
}
