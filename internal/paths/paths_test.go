package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestAgentDir(t *testing.T) {
	t.Parallel()
	pkg := t.TempDir()
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"piConfig": {"name": "tau", "configDir": ".tau"}}`), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"default", nil, "/h/.pi/agent"},
		{"override", map[string]string{"PI_CODING_AGENT_DIR": "/x/agent"}, "/x/agent"},
		{"override with ~", map[string]string{"PI_CODING_AGENT_DIR": "~/a"}, "/h/a"},
		{"override ~ alone", map[string]string{"PI_CODING_AGENT_DIR": "~"}, "/h"},
		{"relative override", map[string]string{"PI_CODING_AGENT_DIR": "rel"}, "/cwd/rel"},
		{"blank override", map[string]string{"PI_CODING_AGENT_DIR": "  "}, "/h/.pi/agent"},
		{"rebranded: config dir", map[string]string{"PI_PACKAGE_DIR": pkg}, "/h/.tau/agent"},
		{"rebranded: variable", map[string]string{"PI_PACKAGE_DIR": pkg, "TAU_CODING_AGENT_DIR": "/t", "PI_CODING_AGENT_DIR": "/ignored"}, "/t"},
		{"unreadable manifest", map[string]string{"PI_PACKAGE_DIR": "/nonexistent", "PI_CODING_AGENT_DIR": "/p"}, "/p"},
	}
	for _, tc := range cases {
		if got := AgentDir("/h", "/cwd", env(tc.env)); got != tc.want {
			t.Errorf("%s: AgentDir = %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := ConfigDirName(env(map[string]string{"PI_PACKAGE_DIR": pkg})); got != ".tau" {
		t.Errorf("ConfigDirName = %s", got)
	}
	if got := ConfigDirName(nil); got != ".pi" {
		t.Errorf("ConfigDirName(nil) = %s", got)
	}
}

func TestWithinAndExpand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p string
		want    bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a", "/", false}, {"/a/b", "/a/b/../c", false},
	} {
		if got := Within(tc.root, filepath.Clean(tc.p)); got != tc.want {
			t.Errorf("Within(%s, %s) = %v", tc.root, tc.p, got)
		}
	}
	if Expand("/h", "~/x") != "/h/x" || Expand("/h", "~") != "/h" || Expand("/h", "~x") != "~x" || Expand("/h", "/y") != "/y" {
		t.Error("Expand")
	}
}

func TestWithinEmptyRoot(t *testing.T) {
	if Within("", "/etc/passwd") || Within("", "") {
		t.Fatal("an empty root holds nothing")
	}
}

// TestWithinFold: the case-folding sibling holds every spelling of a
// folder, and nothing Within does not hold once case is set aside.
func TestWithinFold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p string
		want    bool
	}{
		{"/Users/Me/Proj", "/users/me/proj/x", true}, {"/a", "/A", true}, {"/", "/X", true},
		{"/a", "/AB", false}, {"/a/b", "/A", false}, {"", "/a", false},
	} {
		if got := WithinFold(tc.root, tc.p); got != tc.want {
			t.Errorf("WithinFold(%s, %s) = %v", tc.root, tc.p, got)
		}
	}
}

// TestLookPath is the one PATH search: execvp's rules for empty and relative
// entries, regular executable files only.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exe := mk("bin/tool", 0o755)
	mk("plain/tool", 0o644)
	here := mk("tool", 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "dirs/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs := func(s string) string { return filepath.Join(dir, s) }
	for _, tc := range []struct{ name, path, want string }{
		{"tool", abs("bin"), exe},
		{"tool", abs("plain") + ":" + abs("bin"), exe}, // not executable: passed over
		{"tool", abs("dirs") + ":" + abs("bin"), exe},  // a folder: passed over
		{"tool", ":" + abs("bin"), here},               // empty entry: the directory
		{"tool", "bin", exe},                           // relative entry: from the directory
		{"tool", abs("plain"), ""},
		{"bin/tool", abs("bin"), ""}, // a name with a slash is not searched
		{"", abs("bin"), ""},
	} {
		if got := LookPath(tc.name, tc.path, dir, os.Stat); got != tc.want {
			t.Errorf("LookPath(%q, %q) = %q, want %q", tc.name, tc.path, got, tc.want)
		}
	}
	// What piagent itself runs: an empty or relative entry chooses nothing,
	// so a program planted in the folder a command starts in is not run.
	t.Chdir(dir)
	for _, tc := range []struct{ path, want string }{
		{":" + abs("bin"), exe},
		{"bin:" + abs("bin"), exe},
		{".:" + abs("plain"), ""},
		{"", ""},
	} {
		if got := LookPathAbs("tool", tc.path, os.Stat); got != tc.want {
			t.Errorf("LookPathAbs(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestAbsFrom: for a clean absolute folder, AbsFrom is Abs.
func TestAbsFrom(t *testing.T) {
	dirs := []string{"/", "/p", "/home/u/proj", "/a b/c"}
	ps := []string{"", ".", "..", "a", "a/b", "a//b", "a/./b", "a/../b", "./a", "../a", "a/", "a/.", "a/..", "/abs", "/abs/../x",
		"server-1.js", "8080", "--port", "src/a.go", "...", "a..b", ".a/b.", "~", "a/b/c/d.txt"}
	for _, d := range dirs {
		for _, p := range ps {
			if got, want := AbsFrom(d, p), Abs(d, p); got != want {
				t.Errorf("AbsFrom(%q, %q) = %q, Abs gives %q", d, p, got, want)
			}
		}
	}
}

func FuzzAbsFrom(f *testing.F) {
	f.Add("/home/u", "a/b")
	f.Add("/", "a/../../b")
	f.Fuzz(func(t *testing.T, d, p string) {
		d = filepath.Clean("/" + d) // AbsFrom's folder is clean and absolute
		if got, want := AbsFrom(d, p), Abs(d, p); got != want {
			t.Fatalf("AbsFrom(%q, %q) = %q, Abs gives %q", d, p, got, want)
		}
	})
}
