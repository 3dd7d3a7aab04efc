package ops

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/setup"
)

// setupMachine is a fake home with pi, npm and piagent on PATH; Pi's
// package commands, through run, append to Pi's settings as pi install
// does, and fail for a source that fails names.
type setupMachine struct {
	o     *Ops
	ran   []string
	fails string
}

func newSetupMachine(t *testing.T) *setupMachine {
	t.Helper()
	home, bin := t.TempDir(), t.TempDir()
	for _, name := range []string{"pi", "npm", "piagent"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, ".pi", "agent"), 0o700)
	env := map[string]string{"PATH": bin}
	m := &setupMachine{}
	m.o = &Ops{Home: home, Dir: home, Getenv: func(k string) string { return env[k] },
		Output: func(argv ...string) (string, error) {
			switch filepath.Base(argv[0]) {
			case "pi":
				return "0.86.1\n", nil
			case "piagent":
				return "piagent " + Version + " (helper protocol 2)\n", nil
			}
			return "", errors.New("no such program")
		}}
	return m
}

func (m *setupMachine) run(pi string, act PackageAction) error {
	if act.Source == m.fails {
		return errors.New(act.Command() + " failed: exit status 1")
	}
	m.ran = append(m.ran, act.Command())
	if act.Source == AdapterSource {
		dir := filepath.Join(m.o.Home, ".pi", "agent", "npm", "node_modules", "pi-mcp-adapter")
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "pi-mcp-adapter", "version": "2.36.0"}`), 0o600)
	}
	settings := filepath.Join(m.o.Home, ".pi", "agent", "settings.json")
	var s struct {
		Packages []string `json:"packages"`
	}
	if data, err := os.ReadFile(settings); err == nil {
		json.Unmarshal(data, &s)
	}
	s.Packages = append(s.Packages, act.Source)
	data, _ := json.Marshal(s)
	return os.WriteFile(settings, data, 0o600)
}

func (m *setupMachine) options(dryRun bool) SetupOptions {
	return SetupOptions{Preset: "core", DryRun: dryRun, Run: m.run,
		Seed: func(bool) (Seeded, error) {
			return Seeded{Answer: &WriteResult{Preset: "seeded"}, Needs: []Need{}}, nil
		}}
}

// Setup installs the extension, then the adapter, records that it
// installed the adapter, and a second run changes nothing.
func TestSetupRunsThePlanOnce(t *testing.T) {
	m := newSetupMachine(t)
	dry, err := m.o.Setup(m.options(true))
	if err != nil || !dry.Changed || len(dry.Actions) != 2 || len(m.ran) != 0 {
		t.Fatalf("dry run: %+v, %v; ran %v", dry, err, m.ran)
	}
	if _, err := os.Stat(dry.Record); err == nil {
		t.Fatal("the dry run wrote the record")
	}
	out, err := m.o.Setup(m.options(false))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ran) != 2 || !strings.HasPrefix(m.ran[0], "pi install "+ExtensionDir(m.o.Home)) || m.ran[1] != "pi install "+AdapterSource {
		t.Errorf("ran %q", m.ran)
	}
	if !out.Changed || !out.RecordChanged || out.Preset == nil || out.Preset.Preset != "seeded" || len(out.Problems) != 0 || out.Stopped != 0 {
		t.Errorf("setup: %+v", out)
	}
	for _, act := range out.Actions {
		if !act.Done {
			t.Errorf("%s not done", act.Command)
		}
	}
	again, err := m.o.Setup(m.options(false))
	if err != nil || again.Changed || len(again.Actions) != 0 || len(m.ran) != 2 {
		t.Errorf("second run: %+v, %v; ran %v", again, err, m.ran)
	}
	check, err := m.o.CheckSetup()
	if err != nil || !check.OK || !check.WantsAdapter() || check.Record == nil || !check.Record.AdapterInstalled {
		t.Errorf("check: %+v, %v", check, err)
	}
}

// Without Pi, setup refuses before it writes anything, and says why as
// problems with their fixes.
func TestSetupRefusesBeforeChanging(t *testing.T) {
	m := newSetupMachine(t)
	m.o.Getenv = func(string) string { return "" }
	out, err := m.o.Setup(m.options(false))
	var oe *Error
	if !errors.As(err, &oe) || oe.Kind != Refused || out == nil || out.Stopped != StopProblems {
		t.Fatalf("got %+v, %v", out, err)
	}
	if len(out.Problems) == 0 || out.Problems[0].Code != "pi-missing" || len(m.ran) != 0 {
		t.Errorf("problems %+v, ran %v", out.Problems, m.ran)
	}
	if _, err := os.Stat(filepath.Join(m.o.Home, ".pi", "piagent")); err == nil {
		t.Error("setup wrote piagent's folder before refusing")
	}
}

// A failed package command stops setup with what ran and what is left;
// the record does not claim the adapter it did not install.
func TestSetupStopsAtAFailedPackage(t *testing.T) {
	m := newSetupMachine(t)
	m.fails = AdapterSource
	out, err := m.o.Setup(m.options(false))
	var oe *Error
	if !errors.As(err, &oe) || out == nil || out.Stopped != StopPackage {
		t.Fatalf("got %+v, %v", out, err)
	}
	if !out.Actions[0].Done || out.Actions[1].Done {
		t.Errorf("actions %+v", out.Actions)
	}
	if len(oe.Hints) != 2 || oe.Hints[1].Text != "left to do: pi install "+AdapterSource {
		t.Errorf("hints %+v", oe.Hints)
	}
	data, err := os.ReadFile(out.Record)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := setup.DecodeRecord(data); err != nil || rec.AdapterInstalled || rec.Extension != out.Extension {
		t.Errorf("record %+v, %v", rec, err)
	}
}

func TestPiArgs(t *testing.T) {
	for _, c := range []struct {
		args  []string
		pass  bool
		usage bool
	}{
		{nil, false, false},
		{[]string{"install", "npm:x"}, true, false},
		{[]string{"list"}, true, false},
		{[]string{"-p", "hello"}, false, false},
		{[]string{"mcp", "list"}, false, true},
		{[]string{"--mcp-config", "x.json"}, false, true},
		{[]string{"--mcp-config=x.json"}, false, true},
	} {
		pass, err := PiArgs(c.args)
		var oe *Error
		if pass != c.pass || (err != nil) != c.usage || err != nil && (!errors.As(err, &oe) || oe.Kind != Usage) {
			t.Errorf("PiArgs(%q) = %v, %v", c.args, pass, err)
		}
	}
}

// Uninstall removes, through Pi, what setup installed, then the
// extension's copies and the record; without --purge the decisions and
// the configuration stay.
func TestUninstallRemovesWhatSetupInstalled(t *testing.T) {
	m := newSetupMachine(t)
	if _, err := m.o.Setup(m.options(false)); err != nil {
		t.Fatal(err)
	}
	m.ran = nil
	pl, err := m.o.PlanUninstall(false)
	if err != nil || len(pl.Files) != 0 || len(pl.Seeded) != 0 {
		t.Fatalf("plan %+v, %v", pl, err)
	}
	out, err := m.o.Uninstall(pl, m.run)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ran) != 2 || !strings.HasPrefix(m.ran[0], "pi remove ") || m.ran[1] != "pi remove "+AdapterSource {
		t.Errorf("ran %q", m.ran)
	}
	want := []string{filepath.Dir(ExtensionDir(m.o.Home)), filepath.Join(m.o.Home, ".pi", "piagent", "setup.json")}
	if !out.Changed || strings.Join(out.Removed, "\n") != strings.Join(want, "\n") || len(out.Kept) != 2 {
		t.Errorf("uninstall: removed %q, kept %q", out.Removed, out.Kept)
	}
	for _, p := range want {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}

// TestPackageEnviron: Pi's package commands run with npm's update notifier
// off, unless the person set it (to anything, empty included); the
// caller's environment is not written through.
func TestPackageEnviron(t *testing.T) {
	t.Parallel()
	env := make([]string, 1, 4)
	env[0] = "HOME=/h"
	got := PackageEnviron(env)
	if want := []string{"HOME=/h", "npm_config_update_notifier=false"}; !slices.Equal(got, want) {
		t.Errorf("PackageEnviron = %q, want %q", got, want)
	}
	if env[:2][1] != "" {
		t.Errorf("the caller's environment was written through: %q", env[:2])
	}
	for _, set := range []string{"npm_config_update_notifier=true", "npm_config_update_notifier="} {
		if got := PackageEnviron([]string{"HOME=/h", set}); !slices.Equal(got, []string{"HOME=/h", set}) {
			t.Errorf("with %s: %q", set, got)
		}
	}
}
