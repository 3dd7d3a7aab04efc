package pihost

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPlanLaunch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v                 Version
		adapter           bool
		useAdapter, noMCP bool
		refuse, notice    bool
	}{
		{Version{0, 86, 1}, true, true, false, false, false},
		{Version{0, 86, 1}, false, false, false, false, true},
		{Version{0, 99, 1}, true, false, false, true, false},
		{Version{1, 0, 3}, false, false, false, true, false},
		{Version{1, 0, 4}, true, true, true, false, false},
		{Version{1, 6, 0}, true, true, true, false, false},
		{Version{1, 6, 0}, false, false, true, false, true},
	} {
		p := PlanLaunch(tc.v, tc.adapter)
		if p.Adapter != tc.useAdapter || p.NoMCP != tc.noMCP || (p.Refuse != "") != tc.refuse || (p.Notice != "") != tc.notice {
			t.Errorf("Pi %s adapter %v: %+v", tc.v, tc.adapter, p)
		}
	}
}

func TestPackageVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "lib", "node_modules", "@earendil-works", "pi-coding-agent")
	os.MkdirAll(filepath.Join(pkg, "dist", "bundle"), 0o755)
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@earendil-works/pi-coding-agent","version":"1.6.0"}`), 0o644)
	cli := filepath.Join(pkg, "dist", "bundle", "cli.js")
	os.WriteFile(cli, []byte("#!/usr/bin/env node\n"), 0o755)
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	link := filepath.Join(dir, "bin", "pi")
	os.Symlink(cli, link)
	if v, ok := PackageVersion(link); !ok || v != (Version{1, 6, 0}) {
		t.Errorf("through the bin link: %v %v", v, ok)
	}
	other := filepath.Join(dir, "wrapper")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	if _, ok := PackageVersion(other); ok {
		t.Error("a wrapper outside the package has a version")
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
		err  bool
	}{
		{"0.86.1\n", Version{0, 86, 1}, false},
		{"v22.19.0", Version{22, 19, 0}, false},
		{"v22.23.5\nextra", Version{22, 23, 5}, false},
		{"22.19.0-rc.1", Version{22, 19, 0}, false},
		{"pi 0.86.0", Version{0, 86, 0}, false},
		{"1.2", Version{1, 2, 0}, false},
		{"", Version{}, true},
		{"v", Version{}, true},
		{"1.2.3.4", Version{}, true},
		{"01.2.3", Version{}, true},
		{"a.b.c", Version{}, true},
		{"1..3", Version{}, true},
	} {
		got, err := ParseVersion(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrVersion) {
			t.Errorf("ParseVersion(%q) error %v is not ErrVersion", tc.in, err)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"0.86.1", "v22.19.0", "1.2", "x", "22.19.0-rc.1+b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		w, err := ParseVersion(v.String())
		if err != nil || w != v {
			t.Fatalf("%q -> %v does not round-trip: %v %v", s, v, w, err)
		}
	})
}

// TestTestedPinned: the Pi a fix tells the person to install is the one the
// end-to-end suite pins.
func TestTestedPinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "e2e", "npm-pi16", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	if got := lock.Packages["node_modules/"+Package].Version; got != Tested {
		t.Errorf("the end-to-end suite pins Pi %q, Tested is %q", got, Tested)
	}
}

// piPackage makes a Pi package of version ver under dir, with its
// dist/bundle/cli.js and a bin/pi link to it, and returns the link.
func piPackage(t *testing.T, dir, ver string) string {
	t.Helper()
	pkg := filepath.Join(dir, "lib", "node_modules", "@earendil-works", "pi-coding-agent")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(pkg, "dist", "bundle"), 0o755))
	must(os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@earendil-works/pi-coding-agent","version":"`+ver+`"}`), 0o644))
	cli := filepath.Join(pkg, "dist", "bundle", "cli.js")
	must(os.WriteFile(cli, []byte("#!/usr/bin/env node\n"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	link := filepath.Join(dir, "bin", "pi")
	must(os.Symlink(cli, link))
	return link
}

// TestReadVersion is the one rule for Pi's version: the package's own
// package.json first (--version is not run), else --version, whose failure
// or garbage is an error (ErrVersion for garbage).
func TestReadVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pi := piPackage(t, dir, "1.6.0")
	ran := 0
	output := func(out string, err error) func(...string) (string, error) {
		return func(argv ...string) (string, error) {
			ran++
			if len(argv) != 2 || argv[1] != "--version" {
				t.Errorf("ran %v", argv)
			}
			return out, err
		}
	}
	if v, _, err := ReadVersion(pi, output("0.86.1", nil)); err != nil || v != (Version{1, 6, 0}) || ran != 0 {
		t.Errorf("in its package: %v %v, --version ran %d times", v, err, ran)
	}
	wrapper := filepath.Join(dir, "wrapper")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, out, err := ReadVersion(wrapper, output("pi 0.86.1\n", nil)); err != nil || v != (Version{0, 86, 1}) || out != "pi 0.86.1\n" {
		t.Errorf("a wrapper: %v %q %v", v, out, err)
	}
	if _, _, err := ReadVersion(wrapper, output("hello", nil)); !errors.Is(err, ErrVersion) {
		t.Errorf("garbage: %v", err)
	}
	failed := errors.New("exit status 1")
	if _, _, err := ReadVersion(wrapper, output("", failed)); !errors.Is(err, failed) {
		t.Errorf("a failing --version: %v", err)
	}
}

// TestFind: PIAGENT_PI (relative to the folder, ~ for home) when set, which
// must be an executable file; else pi on PATH; else ErrNotFound.
func TestFind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pi := piPackage(t, dir, "1.6.0")
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name      string
		getenv    func(string) string
		path, via string
		err       error
	}{
		{"PIAGENT_PI relative", env("PIAGENT_PI", "bin/pi", "PATH", "/nowhere"), pi, EnvPi, nil},
		{"PIAGENT_PI under ~", env("PIAGENT_PI", "~/bin/pi"), pi, EnvPi, nil},
		{"PIAGENT_PI not executable", env("PIAGENT_PI", plain), plain, EnvPi, ErrNotExecutable},
		{"PIAGENT_PI a folder", env("PIAGENT_PI", dir), dir, EnvPi, ErrNotExecutable},
		{"PIAGENT_PI missing", env("PIAGENT_PI", "nope"), filepath.Join(dir, "nope"), EnvPi, os.ErrNotExist},
		{"PATH", env("PATH", "/nowhere:"+filepath.Join(dir, "bin")), pi, "PATH", nil},
		{"nowhere", env("PATH", "/nowhere"), "", "", ErrNotFound},
	} {
		path, via, err := Find(tc.getenv, dir, dir)
		if path != tc.path || via != tc.via || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: %q %q %v; want %q %q %v", tc.name, path, via, err, tc.path, tc.via, tc.err)
		}
	}
}

func TestAdapterIn(t *testing.T) {
	t.Parallel()
	if l, n := AdapterIn([]string{"--no-extensions", "-e", "/x/piagent/index.ts", "-e", "/n/pi-mcp-adapter/index.ts", "-p", "hi"}); !l || !n {
		t.Errorf("got %v %v", l, n)
	}
	if l, n := AdapterIn([]string{"-p", "pi-mcp-adapter"}); l || n {
		t.Errorf("a prompt naming the adapter: %v %v", l, n)
	}
}

// TestProjectTrust: the nearest entry at the project or a folder above it
// decides, as Pi finds it; no entry, or no file, is undecided; a file that
// is not JSON is an error, never trust.
func TestProjectTrust(t *testing.T) {
	t.Parallel()
	agent := t.TempDir()
	if got := ProjectTrust(agent, "/p/q"); got != (Trust{}) {
		t.Errorf("no trust.json: %+v", got)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(agent, "trust.json"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("\ufeff" + `{"/p": true, "/p/q/r": false}`)
	for _, tc := range []struct {
		project string
		want    Trust
	}{
		{"/p/q", Trust{Trusted: true, Decided: true, From: "/p"}},
		{"/p/q/r/s", Trust{Decided: true, From: "/p/q/r"}},
		{"/other", Trust{}},
	} {
		if got := ProjectTrust(agent, tc.project); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.project, got, tc.want)
		}
	}
	write("{not json")
	if got := ProjectTrust(agent, "/p"); got.Trusted || got.Decided || got.Err == "" {
		t.Errorf("broken trust.json: %+v", got)
	}
}
