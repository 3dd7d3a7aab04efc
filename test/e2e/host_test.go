package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 18: the launcher knows its Pi. These runs install piagent's
// extension (and the adapter, where named) as Pi packages in the agent
// dir's settings.json, the way `pi install` does, so that Pi 1.6's built-in
// MCP client is live; each negative case has a positive control with plain
// pi in the same world.

// Install lists package folders in the agent dir's settings.json.
func (w *World) Install(pkgs ...string) {
	w.t.Helper()
	list := make([]any, 0, len(pkgs))
	for _, p := range pkgs {
		list = append(list, p)
	}
	w.WriteJSON(filepath.Join(w.AgentDir, "settings.json"), map[string]any{"packages": list})
}

// Trust records the project as trusted in Pi's trust.json.
func (w *World) Trust() {
	w.t.Helper()
	w.WriteJSON(filepath.Join(w.AgentDir, "trust.json"), map[string]any{w.Project: true})
}

func extensionDir() string { return filepath.Join(deps.repoRoot, "extensions", "pi") }
func adapterDir() string   { return filepath.Dir(deps.adapter) }

// piMCPWorld: a trusted project whose .pi/mcp.json holds the marker server,
// eager so that the adapter connects it at session start too.
func piMCPWorld(t *testing.T) *World {
	w := NewWorld(t)
	srv := w.MarkerServer("repo-tools")
	srv["lifecycle"] = "eager"
	w.WriteMCP(w.ProjectFile(".pi/mcp.json"), map[string]any{"repo-tools": srv}, nil)
	w.SeedCache()
	w.Trust()
	return w
}

func installedRun(t *testing.T, w *World, bins Bins, viaPiagent bool) *PiRun {
	t.Helper()
	w.StartLLM(Say("hello"))
	opts := PiOptions{Prompt: "Say hello", Installed: true, Env: map[string]string{"PIAGENT_BIN": bins.Piagent, "PIAGENT_PI": PiCLI()}}
	var r *PiRun
	if viaPiagent {
		r = w.RunProcess(append([]string{bins.Piagent, "pi"}, PiFlags(opts)...), opts)
	} else {
		r = w.RunPi(opts)
	}
	requireExit0(t, r)
	// an eager connection is made at session start but may finish after
	// the first answer: give it a moment to be recorded
	time.Sleep(300 * time.Millisecond)
	return r
}

// With the adapter installed and a trusted project holding .pi/mcp.json:
// plain pi starts the server (the adapter's eager lifecycle, and on Pi 1.6
// nothing else); piagent pi starts nothing.
func TestHostAdapterTrustedPiMCP(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	control := piMCPWorld(t)
	control.Install(adapterDir())
	installedRun(t, control, bins, false)
	if control.MarkerStarts("repo-tools") == 0 {
		t.Fatalf("positive control: plain pi %s with the adapter did not start the .pi/mcp.json server, so this test shows nothing", deps.pi)
	}

	w := piMCPWorld(t)
	w.Install(extensionDir(), adapterDir())
	r := installedRun(t, w, bins, true)
	requireNoStart(t, w, "repo-tools")
	if !strings.Contains(r.Stderr, "held back MCP server repo-tools") {
		t.Errorf("no launcher notice:\n%s", r.Stderr)
	}
}

// Without the adapter: on Pi 1.6 plain pi's built-in client starts the
// trusted project's server when piagent's extension is not installed; with
// the extension installed it steps the built-in aside, so plain pi starts
// nothing (issue 19, item 2); piagent pi runs Pi with no MCP client at all,
// and the notice names the fix instead of Pi's "Unknown option" error.
func TestHostNoAdapter(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	if deps.pi == "1.6" {
		control := piMCPWorld(t)
		installedRun(t, control, bins, false)
		if control.MarkerStarts("repo-tools") == 0 {
			t.Fatal("positive control: plain pi 1.6 without the adapter did not start the server through its built-in client")
		}
		plain := piMCPWorld(t)
		plain.Install(extensionDir())
		r := installedRun(t, plain, bins, false)
		requireNoStart(t, plain, "repo-tools")
		if r.FinalText() != "hello" {
			t.Errorf("plain pi with the extension did not run: %q\n%s", r.FinalText(), r.Stderr)
		}
		if strings.Contains(r.Stderr, "built-in MCP client is loaded") {
			t.Errorf("the extension says the built-in loaded:\n%s", r.Stderr)
		}
	}
	w := piMCPWorld(t)
	w.Install(extensionDir())
	r := installedRun(t, w, bins, true)
	requireNoStart(t, w, "repo-tools")
	if !strings.Contains(r.Stderr, "pi-mcp-adapter is not installed; run 'piagent setup'") || strings.Contains(r.Stderr, "Unknown option") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
	if r.FinalText() != "hello" {
		t.Errorf("Pi did not run: %q", r.FinalText())
	}
}

// With the extension and the adapter both installed, the extension leaves
// /mcp to the adapter: plain pi's adapter still works as before (it starts
// the eager server, as the adapter does without piagent's launcher), and Pi
// reports no second /mcp.
func TestHostAdapterKeepsMCP(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := piMCPWorld(t)
	w.Install(extensionDir(), adapterDir())
	r := installedRun(t, w, bins, false)
	if w.MarkerStarts("repo-tools") == 0 {
		t.Errorf("plain pi with the adapter and the extension: the adapter's eager server did not start, so the extension took /mcp from it\n%s", r.Stderr)
	}
	if strings.Contains(r.Stderr, "mcp:1") || strings.Contains(r.Stderr, "built-in MCP client is loaded") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
}

// `piagent pi mcp list` is refused with a pointer; plain `pi mcp list`
// (Pi 1.6) connects the trusted project's server.
func TestHostPiMCPListRefused(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	env := map[string]string{"PIAGENT_PI": PiCLI()}
	if deps.pi == "1.6" {
		control := piMCPWorld(t)
		r := control.RunProcess([]string{deps.node, PiCLI(), "mcp", "list"}, PiOptions{Mode: "print", Env: env, Timeout: 60 * time.Second})
		if control.MarkerStarts("repo-tools") == 0 {
			t.Fatalf("positive control: pi mcp list did not start the server\n%s", r.Describe())
		}
	}
	w := piMCPWorld(t)
	r := w.RunProcess([]string{bins.Piagent, "pi", "mcp", "list"}, PiOptions{Mode: "print", Env: env})
	if r.ExitCode != 2 || !strings.Contains(r.Stderr, "does not run Pi's own 'pi mcp' commands") || !strings.Contains(r.Stderr, "mcp list") {
		t.Errorf("exit %d\n%s", r.ExitCode, r.Stderr)
	}
	requireNoStart(t, w, "repo-tools")
}

// piagent-mcp disable on a pi-global server writes enabled: false beside
// disabled: true, so Pi 1.6's built-in client (which ignores disabled) does
// not start it either: `pi mcp list` connects it before, not after (issue
// 19, item 5); enable takes both away and it connects again.
func TestDisableSpeaksBuiltin(t *testing.T) {
	t.Parallel()
	if deps.pi != "1.6" {
		t.Skipf("Pi %s has no built-in MCP client", deps.pi)
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"mine": w.MarkerServer("mine")}, nil)
	env := map[string]string{"PIAGENT_PI": PiCLI()}
	list := func() {
		r := w.RunProcess([]string{deps.node, PiCLI(), "mcp", "list"}, PiOptions{Mode: "print", Env: env, Timeout: 60 * time.Second})
		if r.ExitCode != 0 && r.ExitCode != 1 {
			t.Logf("pi mcp list: %s", r.Describe())
		}
	}
	list()
	if w.MarkerStarts("mine") == 0 {
		t.Fatal("positive control: pi mcp list did not start the pi-global server")
	}
	before := w.MarkerStarts("mine")
	if r := w.Exec(bins.PiagentMCP, "disable", "mine"); r.ExitCode != 0 {
		t.Fatalf("disable: %s", r.Describe())
	}
	list()
	if n := w.MarkerStarts("mine"); n != before {
		t.Errorf("pi mcp list started the disabled server (%d starts, %d before)\n%s", n, before, w.Read(filepath.Join(w.AgentDir, "mcp.json")))
	}
	if r := w.Exec(bins.PiagentMCP, "enable", "mine"); r.ExitCode != 0 {
		t.Fatalf("enable: %s", r.Describe())
	}
	list()
	if n := w.MarkerStarts("mine"); n == before {
		t.Errorf("after enable, pi mcp list did not start the server")
	}
}
