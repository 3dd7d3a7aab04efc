package setup

import (
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

func TestPiPackageVersion(t *testing.T) {
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
	if v, ok := PiPackageVersion(link); !ok || v != (Version{1, 6, 0}) {
		t.Errorf("through the bin link: %v %v", v, ok)
	}
	other := filepath.Join(dir, "wrapper")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)
	if _, ok := PiPackageVersion(other); ok {
		t.Error("a wrapper outside the package has a version")
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
