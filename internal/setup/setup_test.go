package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	home     = "/h"
	agentDir = "/h/.pi/agent"
	extDir   = "/h/.pi/piagent/extension/0.1.0"
)

var where = Where{AgentDir: agentDir, Home: home, ExtensionRoot: "/h/.pi/piagent/extension"}

// manifests are the package.json files the tests' local sources hold.
var manifests = map[string]Manifest{
	extDir:                            {ExtensionName, "0.1.0"},
	"/h/src/piagent/extensions/pi":    {ExtensionName, "0.0.9"},
	"/h/.pi/agent/extensions-mine":    {"mine", "1.0.0"},
	"/h/.pi/piagent/extension/0.0.1":  {ExtensionName, "0.0.1"},
	"/elsewhere/not-piagent/whatever": {"other", "2.0.0"},
}

func readManifest(dir string) (Manifest, bool) { m, ok := manifests[dir]; return m, ok }

func classify(sources ...string) []Package {
	var es []Entry
	for _, s := range sources {
		obj := strings.HasPrefix(s, "{}")
		es = append(es, Entry{Source: strings.TrimPrefix(s, "{}"), Object: obj})
	}
	return Classify(es, where, readManifest)
}

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		out  string
		pi   string // problem code or ""
		node string
	}{
		{"0.86.0", "", "node-old"},
		{"0.86.1", "", "node-old"},
		{"0.85.9", "pi-old", "node-old"},
		{"1.0.0", "", "node-old"},
		{"v22.19.0", "", ""},
		{"v22.18.9", "", "node-old"},
		{"v23.0.0", "", ""},
		{"v20.20.2", "", "node-old"},
		{"garbage", "pi-version", "node-version"},
	} {
		_, p := CheckPi(tc.out)
		if code(p) != tc.pi {
			t.Errorf("CheckPi(%q) = %v, want %q", tc.out, p, tc.pi)
		}
		_, p = CheckNode(tc.out)
		if code(p) != tc.node {
			t.Errorf("CheckNode(%q) = %v, want %q", tc.out, p, tc.node)
		}
	}
}

func code(p *Problem) string {
	if p == nil {
		return ""
	}
	if p.Reason == "" || p.Fix == "" {
		return "problem without reason or fix"
	}
	return p.Code
}

func TestShebang(t *testing.T) {
	for _, tc := range []struct {
		in             string
		prog           string
		viaEnv, ok, js bool
	}{
		{"#!/usr/bin/env node\nimport x", "node", true, true, true},
		{"#!/usr/bin/env -S node --no-warnings\n", "node", true, true, true},
		{"#!/opt/node22/bin/node\n", "/opt/node22/bin/node", false, true, true},
		{"#!/bin/sh\nexec x", "/bin/sh", false, true, false},
		{"#!/usr/bin/env NODE_OPTIONS=x node\n", "node", true, true, true},
		{"\x7fELF....", "", false, false, false},
		{"#!\n", "", false, false, false},
	} {
		prog, viaEnv, ok := Shebang([]byte(tc.in))
		if prog != tc.prog || viaEnv != tc.viaEnv || ok != tc.ok || UsesNode(prog) != tc.js {
			t.Errorf("Shebang(%q) = %q, %v, %v (node %v)", tc.in, prog, viaEnv, ok, UsesNode(prog))
		}
	}
}

func TestParsePackages(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Entry
		err  bool
	}{
		{"missing", "\x00nil", nil, false},
		{"blank", "  // nothing\n", nil, false},
		{"no packages", `{"theme": "dark"}`, nil, false},
		{"null packages", `{"packages": null}`, nil, false},
		{"strings and objects", `{
			// Pi's own file, with a comment
			"packages": ["../../ext", {"source": "npm:pi-mcp-adapter@2.36.0", "extensions": ["index.ts"]}, 3, {"x": 1},],
		}`, []Entry{{Source: "../../ext"}, {Source: "npm:pi-mcp-adapter@2.36.0", Object: true}}, false},
		{"not an array", `{"packages": "npm:x"}`, nil, true},
		{"not an object", `[1]`, nil, true},
		{"broken", `{"packages": [`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.in != "\x00nil" {
				data = []byte(tc.in)
			}
			got, err := ParsePackages(data)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err != nil && !errors.Is(err, ErrSettings) {
				t.Errorf("error %v is not ErrSettings", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	got := classify(
		"../piagent/extension/0.1.0",
		"npm:pi-mcp-adapter@2.36.0",
		"npm:@scope/pi-mcp-adapter@1.0.0",
		"~/src/piagent/extensions/pi",
		"file:///h/.pi/piagent/extension/0.0.1",
		"/h/.pi/piagent/extension/0.0.0",
		"git:github.com/u/r@v1",
		"npm:pi-mcp-adapter",
		"/elsewhere/not-piagent/whatever",
	)
	var kinds []string
	for _, p := range got {
		kinds = append(kinds, string(p.Kind)+" "+p.Version+" "+p.Path)
	}
	want := []string{
		"extension 0.1.0 " + extDir,
		"adapter 2.36.0 ",
		"other  ",
		"extension 0.0.9 /h/src/piagent/extensions/pi",
		"extension 0.0.1 /h/.pi/piagent/extension/0.0.1",
		"extension 0.0.0 /h/.pi/piagent/extension/0.0.0", // gone from disk, but under piagent's folder
		"other  ",
		"adapter  ",
		"other  /elsewhere/not-piagent/whatever", // a local package that is not piagent's
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestParseNPM(t *testing.T) {
	for _, tc := range []struct{ in, name, ver string }{
		{"npm:pi-mcp-adapter@2.36.0", "pi-mcp-adapter", "2.36.0"},
		{"npm:pi-mcp-adapter", "pi-mcp-adapter", ""},
		{"npm:@scope/pkg@^1.2", "@scope/pkg", "^1.2"},
		{"npm:@scope/pkg", "@scope/pkg", ""},
		{"npm: pi-mcp-adapter@2 ", "pi-mcp-adapter", "2"},
	} {
		name, ver, ok := ParseNPM(tc.in)
		if !ok || name != tc.name || ver != tc.ver {
			t.Errorf("ParseNPM(%q) = %q %q %v", tc.in, name, ver, ok)
		}
	}
	if _, _, ok := ParseNPM("git:x"); ok {
		t.Error("ParseNPM(git:x) ok")
	}
}

// step is an action written as "install SOURCE" / "remove SOURCE".
func steps(p Plan) []string {
	out := []string{}
	for _, a := range p.Actions {
		out = append(out, string(a.Op)+" "+a.Source)
	}
	return out
}

func codes(ps []Problem) []string {
	out := []string{}
	for _, p := range ps {
		if p.Reason == "" || p.Fix == "" {
			out = append(out, "incomplete:"+p.Code)
			continue
		}
		out = append(out, p.Code)
	}
	return out
}

func TestMakePlan(t *testing.T) {
	const ext = "../piagent/extension/0.1.0"
	const oldExt = "../piagent/extension/0.0.1"
	for _, tc := range []struct {
		name        string
		pkgs        []string
		noMCP       bool
		want        []string
		problems    []string
		addsAdapter bool
	}{
		{"fresh", nil, false,
			[]string{"install " + extDir, "install " + AdapterSource}, []string{}, true},
		{"fresh, no mcp", nil, true,
			[]string{"install " + extDir}, []string{}, false},
		{"done", []string{ext, AdapterSource}, false, []string{}, []string{}, false},
		{"done among others", []string{"npm:other@1", ext, "git:github.com/u/r", AdapterSource, "./mine"}, false, []string{}, []string{}, false},
		{"done, no mcp, no adapter", []string{ext}, true, []string{}, []string{}, false},
		{"done, no mcp, adapter after", []string{ext, "npm:pi-mcp-adapter@2.30.0"}, true, []string{}, []string{}, false},
		{"extension only", []string{"npm:other@1", ext}, false, []string{"install " + AdapterSource}, []string{}, true},
		{"adapter only: it moves after the extension", []string{AdapterSource, "npm:other@1"}, false,
			[]string{"remove " + AdapterSource, "install " + extDir, "install " + AdapterSource}, []string{}, false},
		{"adapter first: it moves", []string{AdapterSource, ext}, false,
			[]string{"remove " + AdapterSource, "install " + AdapterSource}, []string{}, false},
		{"adapter first, other version: moved and pinned", []string{"npm:pi-mcp-adapter@2.35.1", ext}, false,
			[]string{"remove npm:pi-mcp-adapter@2.35.1", "install " + AdapterSource}, []string{}, false},
		{"adapter after, unpinned: pinned in place", []string{ext, "npm:pi-mcp-adapter"}, false,
			[]string{"install " + AdapterSource}, []string{}, false},
		{"adapter first with filters: reported, not moved", []string{"{}" + AdapterSource, ext}, false,
			[]string{}, []string{"order"}, false},
		{"adapter only with filters: extension installed, order reported", []string{"{}npm:pi-mcp-adapter@2.0.0"}, false,
			[]string{"install " + extDir, "install " + AdapterSource}, []string{"order"}, false},
		{"adapter first, no mcp: reported, left alone", []string{AdapterSource, ext}, true,
			[]string{}, []string{"order"}, false},
		{"stale extension replaced", []string{oldExt, AdapterSource}, false,
			[]string{"remove /h/.pi/piagent/extension/0.0.1", "remove " + AdapterSource, "install " + extDir, "install " + AdapterSource}, []string{}, false},
		{"dev checkout replaced", []string{ext, "~/src/piagent/extensions/pi", AdapterSource}, false,
			[]string{"remove /h/src/piagent/extensions/pi"}, []string{}, false},
		{"stale extension, nothing else", []string{oldExt}, false,
			[]string{"remove /h/.pi/piagent/extension/0.0.1", "install " + extDir, "install " + AdapterSource}, []string{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkgs := classify(tc.pkgs...)
			w := Want{Extension: extDir, Adapter: !tc.noMCP}
			plan := MakePlan(pkgs, w)
			if diff := cmp.Diff(tc.want, steps(plan)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, codes(plan.Problems)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if plan.AddsAdapter != tc.addsAdapter {
				t.Errorf("AddsAdapter = %v, want %v", plan.AddsAdapter, tc.addsAdapter)
			}
			for _, a := range plan.Actions {
				if a.Why == "" {
					t.Errorf("action %v has no reason", a)
				}
			}
			// The end state: nothing left to do, and what the plan could
			// not do is exactly what Status still reports.
			after := Apply(pkgs, plan.Actions, where, readManifest)
			again := MakePlan(after, w)
			if len(again.Actions) != 0 {
				t.Errorf("after the plan, a second plan still does %v", steps(again))
			}
			st := Inspect(after, extDir)
			if len(plan.Problems) == 0 {
				if probs := st.Problems(w); len(probs) != 0 {
					t.Errorf("after the plan, status reports %v", codes(probs))
				}
				if !st.Ordered() {
					t.Errorf("after the plan the extension does not load first: %+v", after)
				}
			}
			// Other packages keep their relative order.
			var before, afterOthers []string
			for _, p := range pkgs {
				if p.Kind == KindOther {
					before = append(before, p.Source)
				}
			}
			for _, p := range after {
				if p.Kind == KindOther {
					afterOthers = append(afterOthers, p.Source)
				}
			}
			if diff := cmp.Diff(before, afterOthers); diff != "" {
				t.Errorf("other packages changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestStatusProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pkgs  []string
		noMCP bool
		want  []string
	}{
		{"nothing", nil, false, []string{"extension-missing", "adapter-missing"}},
		{"nothing, no mcp", nil, true, []string{"extension-missing"}},
		{"ok", []string{"../piagent/extension/0.1.0", AdapterSource}, false, []string{}},
		{"order", []string{AdapterSource, "../piagent/extension/0.1.0"}, false, []string{"order"}},
		{"version", []string{"../piagent/extension/0.1.0", "npm:pi-mcp-adapter@2.0.0"}, false, []string{"adapter-version"}},
		{"stale", []string{"/h/.pi/piagent/extension/0.0.1"}, true, []string{"extension-missing", "extension-stale"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Inspect(classify(tc.pkgs...), extDir)
			got := codes(st.Problems(Want{Extension: extDir, Adapter: !tc.noMCP}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "piagent", "setup.json")
	if _, found, err := ReadRecord(path); found || err != nil {
		t.Fatalf("missing record: found %v, err %v", found, err)
	}
	r := Record{Extension: extDir, AdapterInstalled: true, Preset: "core"}
	changed, err := WriteRecord(path, r)
	if err != nil || !changed {
		t.Fatalf("first write: changed %v, err %v", changed, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if changed, err := WriteRecord(path, r); err != nil || changed {
		t.Errorf("second write: changed %v, err %v", changed, err)
	}
	got, found, err := ReadRecord(path)
	r.Version = RecordVersion
	if err != nil || !found || got != r {
		t.Errorf("read back %+v, %v, %v; want %+v", got, found, err, r)
	}
	for _, bad := range []string{
		`{"version":1,"extension":"x","adapterInstalled":false,"extra":1}`,
		`{"version":2,"extension":"x","adapterInstalled":false}`,
		`{"version":1} {}`,
		`not json`,
	} {
		if _, err := DecodeRecord([]byte(bad)); !errors.Is(err, ErrRecord) {
			t.Errorf("DecodeRecord(%s) = %v, want ErrRecord", bad, err)
		}
	}
}

func FuzzParsePackages(f *testing.F) {
	for _, s := range []string{`{"packages":["a",{"source":"b"}]}`, `{"packages":null}`, ``, `[`, `{"packages":[1,2]}`, "// c\n{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ParsePackages(data)
		if err != nil {
			if !errors.Is(err, ErrSettings) {
				t.Fatalf("error %v is not ErrSettings", err)
			}
			return
		}
		pkgs := Classify(es, where, readManifest)
		plan := MakePlan(pkgs, Want{Extension: extDir, Adapter: true})
		after := Apply(pkgs, plan.Actions, where, readManifest)
		if again := MakePlan(after, Want{Extension: extDir, Adapter: true}); len(again.Actions) != 0 {
			t.Fatalf("plan not idempotent for %q: %v then %v", data, steps(plan), steps(again))
		}
	})
}

// TestReadHeadRefusesFIFO (issue 40, item 2): a FIFO where a program on
// PATH was expected is an error at once, not a hang of doctor or setup.
func TestReadHeadRefusesFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "pi")
	if err := syscall.Mkfifo(p, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readHead(p, 64); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was read as a program")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readHead hangs on a FIFO")
	}
}

// TestManifestOfFIFO (issue 40, item 2): a package folder whose
// package.json is a FIFO or a link to /dev/zero (a local package a
// settings file names) reads as no manifest at once.
func TestManifestOfFIFO(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(string) error{
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		dir := t.TempDir()
		if err := plant(filepath.Join(dir, "package.json")); err != nil {
			t.Fatal(err)
		}
		done := make(chan bool, 1)
		go func() { _, ok := ReadManifest(dir); done <- ok }()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s: read as a manifest", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadManifest hangs", name)
		}
	}
}
