package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLookPathIgnoresTheStartFolder: a PATH with an empty or relative entry
// (":/usr/bin", a common slip) does not let a program planted in the folder
// a command starts in — a repository — run in the real one's place.
func TestLookPathIgnoresTheStartFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sh"), []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{":/usr/bin:/bin", ".:/usr/bin:/bin", "./:/usr/bin:/bin"} {
		got, err := lookPath("sh", []string{"PATH=" + path})
		if err != nil {
			t.Fatalf("PATH=%s: %v", path, err)
		}
		if filepath.Dir(got) == dir || !filepath.IsAbs(got) {
			t.Errorf("PATH=%s: %s, the planted one", path, got)
		}
	}
	if _, err := lookPath("sh", []string{"PATH=."}); err == nil {
		t.Error("PATH=.: found a program through a relative entry")
	}
}
