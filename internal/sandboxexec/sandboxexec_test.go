package sandboxexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lean is piagent-sandbox beside piagent only when no one else could have
// put it there: a copy others may write, a folder, or a missing one is not
// used (piagent sandbox exec runs instead).
func TestLean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "piagent")
	lean := filepath.Join(dir, "piagent-sandbox")
	if got := Lean(bin); got != "" {
		t.Errorf("no piagent-sandbox: Lean = %q", got)
	}
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Lean(bin); got != lean {
		t.Errorf("installed: Lean = %q, want %q", got, lean)
	}
	if got := Lean("piagent"); got != "" {
		t.Errorf("a relative piagent: Lean = %q", got)
	}
	for _, mode := range []os.FileMode{0o775, 0o757, 0o644} {
		os.Chmod(lean, mode)
		if got := Lean(bin); got != "" {
			t.Errorf("mode %v: Lean = %q, want none", mode, got)
		}
	}
	os.Chmod(lean, 0o755)
	if got := Lean(bin); got != lean {
		t.Fatalf("installed again: Lean = %q", got)
	}
	os.Chmod(dir, 0o777) // anyone may now put another file in its place
	if got := Lean(bin); got != "" {
		t.Errorf("a folder others may write: Lean = %q, want none", got)
	}
	os.Chmod(dir, 0o755)
	os.Remove(lean)
	os.Mkdir(lean, 0o755)
	if got := Lean(bin); got != "" {
		t.Errorf("a folder: Lean = %q", got)
	}
}

// Parse takes exactly sandbox exec's flags; anything else is left to the
// full command line, which words the error.
func TestParse(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	env := Env{Home: "/h", Dir: proj}
	o, argv, ok := Parse(env, []string{"--auto", "--profile=server", "--server", "s", "--keep-env", "A,B", "--", "/bin/true", "x"})
	if !ok || !o.Auto || o.Profile != "server" || o.Server != "s" || len(o.KeepEnv) != 2 || o.Project != proj || len(argv) != 2 {
		t.Errorf("Parse = %+v %v %v", o, argv, ok)
	}
	for _, args := range [][]string{
		{"--"},                          // no command
		{"--nosuch", "--", "/bin/true"}, // an unknown flag
		{"--project", "/nonexistent", "--", "true"}, // not a folder
		{"--auto=1", "--", "true"},                  // --auto takes no value
	} {
		if _, _, ok := Parse(env, args); ok {
			t.Errorf("Parse(%q) accepted", args)
		}
	}
}

// TestUpstream: the person's proxy settings pass to piagent's proxy, not
// one a server's definition names (--keep-env), whatever its case.
func TestUpstream(t *testing.T) {
	env := []string{"HTTPS_PROXY=http://p:3128", "no_proxy=corp.test", "HTTP_PROXY=http://h:3128", "PATH=/bin", "ALL_PROXY=socks5://x"}
	got := Upstream(env, []string{"http_proxy"})
	if strings.Join(got, " ") != "HTTPS_PROXY=http://p:3128 no_proxy=corp.test" {
		t.Errorf("Upstream = %q", got)
	}
}
