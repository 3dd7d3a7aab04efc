package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The launcher tests run Pi through `piagent pi` (PIAGENT_PI = Pi's cli.js),
// with piagent's extension and the real adapter. Each negative case is a way
// the adapter starts a repository server outside a tool call without the
// launcher (reference correction 6 and A.6, measured in smoke_test.go and
// the reference's section D); through the launcher the marker stays empty.

// launched is guarded opts for a run through the launcher.
func launched(bins Bins, opts PiOptions) PiOptions {
	opts = guarded(bins, opts)
	opts.Env["PIAGENT_PI"] = PiCLI()
	return opts
}

// runLaunched runs `piagent pi <Pi flags>` in JSON mode (or opts.Mode).
func (w *World) runLaunched(bins Bins, opts PiOptions) *PiRun {
	w.t.Helper()
	opts = launched(bins, opts)
	return w.RunProcess(append([]string{bins.Piagent, "pi"}, PiFlags(opts)...), opts)
}

// requireNoStart fails when the named marker server ever started.
func requireNoStart(t *testing.T, w *World, name string) {
	t.Helper()
	if n := w.MarkerStarts(name); n != 0 {
		t.Errorf("the unapproved repository server %s started %d time(s) through the launcher: %+v", name, n, w.MarkerLines())
	}
}

// sayHello is a run with no tool call.
func sayHello(t *testing.T, w *World, bins Bins) *PiRun {
	t.Helper()
	w.StartLLM(Say("hello"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Say hello"})
	requireExit0(t, r)
	if got := r.FinalText(); got != "hello" {
		t.Errorf("final text = %q, want hello\n%s", got, r.Describe())
	}
	return r
}

// A fresh home has no metadata cache: without the launcher the adapter
// connects every server to fill it (TestSmokeBootstrapSpawnsWithoutToolCall).
func TestLaunchFreshHomeNoBootstrap(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := repoWorld(t)
	r := sayHello(t, w, bins)
	requireNoStart(t, w, "repo-tools")
	if !strings.Contains(r.Stderr, "held back MCP server repo-tools (pending-approval") ||
		!strings.Contains(r.Stderr, "piagent-mcp approve repo-tools") {
		t.Errorf("stderr lacks the launcher's notice:\n%s", r.Stderr)
	}
}

// eager and keep-alive servers connect when the adapter loads.
func TestLaunchLifecycleNoStart(t *testing.T) {
	t.Parallel()
	for _, lc := range []string{"eager", "keep-alive"} {
		t.Run(lc, func(t *testing.T) {
			t.Parallel()
			bins := Binaries(t)
			w := NewWorld(t)
			w.SeedCache()
			srv := w.MarkerServer("repo-tools")
			srv["lifecycle"] = lc
			w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": srv}, nil)
			sayHello(t, w, bins)
			requireNoStart(t, w, "repo-tools")
		})
	}
}

// A repository .mcp.json switching host-config discovery on pulls in the
// repository's own .vscode/mcp.json and opencode.json (variant Hd).
func TestLaunchHostDiscoveryNoStart(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{}, map[string]any{"settings": map[string]any{"hostConfigDiscovery": "on"}})
	w.WriteMCP(w.ProjectFile(".vscode/mcp.json"), map[string]any{"vs": w.MarkerServer("vs")}, nil)
	w.WriteJSON(w.ProjectFile("opencode.json"), map[string]any{"mcp": map[string]any{"oc": map[string]any{
		"type": "local", "command": []any{deps.node, Fixture("mcp-marker-server.mjs")},
		"environment": map[string]any{"MARKER_FILE": w.MarkerFile, "MARKER_NAME": "oc"},
	}}})
	r := sayHello(t, w, bins)
	requireNoStart(t, w, "vs")
	requireNoStart(t, w, "oc")
	for _, name := range []string{"vs", "oc"} {
		if !strings.Contains(r.Stderr, "held back MCP server "+name) {
			t.Errorf("stderr does not name %s as held back:\n%s", name, r.Stderr)
		}
	}
}

// .pi/settings.json lists a local package whose package.json has pi.mcp
// (variant P): the adapter reads it itself.
func TestLaunchPackageNoStart(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteJSON(w.ProjectFile(".pi/settings.json"), map[string]any{"packages": []any{"../evilpkg"}})
	w.WriteJSON(w.ProjectFile("evilpkg/package.json"), map[string]any{"name": "evilpkg", "version": "1.0.0", "pi": map[string]any{"mcp": "mcp.json"}})
	w.WriteMCP(w.ProjectFile("evilpkg/mcp.json"), map[string]any{"srv": w.MarkerServer("evilpkg")}, nil)
	r := sayHello(t, w, bins)
	requireNoStart(t, w, "evilpkg")
	if !strings.Contains(r.Stderr, "held back MCP server evilpkg__srv") {
		t.Errorf("stderr does not name evilpkg__srv:\n%s", r.Stderr)
	}
}

// A claudePlugins entry pointing inside the repository (variant Cp).
func TestLaunchClaudePluginNoStart(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{}, map[string]any{
		"claudePlugins": []any{map[string]any{"path": "./plugins/cp", "mcp": true}},
	})
	w.WriteMCP(w.ProjectFile("plugins/cp/.mcp.json"), map[string]any{"cpsrv": w.MarkerServer("cpsrv")}, nil)
	r := sayHello(t, w, bins)
	requireNoStart(t, w, "cpsrv")
	if !strings.Contains(r.Stderr, "held back MCP server cpsrv") {
		t.Errorf("stderr does not name cpsrv:\n%s", r.Stderr)
	}
}

// An approved repository server and the user's own global server both work
// through the launcher; an unapproved one beside them never starts.
func TestLaunchApprovedAndGlobalWork(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{
		"repo-tools": w.MarkerServer("repo-tools"),
		"other":      w.MarkerServer("other"),
	}, nil)
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"mine": w.MarkerServer("mine")}, nil)
	if a := w.Exec(bins.PiagentMCP, "approve", "repo-tools", "--yes"); a.ExitCode != 0 {
		t.Fatalf("piagent-mcp approve: %s", a.Describe())
	}
	w.StartLLM(proxyEcho("repo-tools", "a"), proxyEcho("mine", "b"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Call both"})
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 2 || trs[0].IsError || trs[1].IsError || !strings.Contains(trs[0].Text, "echo:a") || !strings.Contains(trs[1].Text, "echo:b") {
		t.Fatalf("tool results = %+v, want echo:a then echo:b\n%s", trs, r.Describe())
	}
	requireNoStart(t, w, "other")
	if strings.Contains(r.Stderr, "held back MCP server repo-tools") || !strings.Contains(r.Stderr, "held back MCP server other") {
		t.Errorf("notice should hold back only other:\n%s", r.Stderr)
	}
}

// Approving mid-session, in one RPC session: the unapproved call fails, the
// slash command records consent, rewrites the launch file and reloads, and
// the next call works without restarting Pi.
func TestLaunchApproveMidSession(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := repoWorld(t)
	w.StartLLM(proxyEcho("repo-tools", "before"), Say("blocked"), proxyEcho("repo-tools", "after"))
	opts := launched(bins, PiOptions{Mode: "rpc"})
	s := w.StartRPCProcess(append([]string{bins.Piagent, "pi"}, PiFlags(opts)...), opts)

	s.Prompt("Call it")
	s.WaitType("agent_end")
	trs := s.ToolResults()
	if len(trs) != 1 || !trs[0].IsError {
		t.Fatalf("before approval: tool results = %+v, want one failed call\n%s", trs, s.describe())
	}
	requireNoStart(t, w, "repo-tools")

	s.Prompt("/piagent-mcp approve repo-tools")
	defer func() {
		if t.Failed() {
			for _, e := range s.Events() {
				if e.Type() == "extension_ui_request" {
					t.Logf("ui request: %v", e)
				}
			}
		}
	}()
	// With a UI the extension asks for consent; answer yes if it does.
	ev := s.WaitFor(30*time.Second, "consent or approved notice", func(e Event) bool {
		msg, _ := e["message"].(string)
		return isConsent(e) || e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "approved repo-tools")
	})
	if isConsent(ev) {
		s.Consent(ev)
		s.WaitFor(30*time.Second, "approved notice", func(e Event) bool {
			msg, _ := e["message"].(string)
			return e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "approved repo-tools")
		})
	}
	s.WaitFor(30*time.Second, "reload notice", func(e Event) bool {
		msg, _ := e["message"].(string)
		return e.Type() == "extension_ui_request" && strings.Contains(msg, "reloading")
	})
	// The CLI rewrote the launch file before the extension reloaded.
	deadline := time.Now().Add(budget(15 * time.Second))
	cfgPath := ""
	for time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(w.Home, ".pi", "piagent", "launch", "*.json"))
		if len(matches) == 1 {
			cfgPath = matches[0]
			if data, _ := os.ReadFile(cfgPath); strings.Contains(string(data), `"repo-tools"`) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if data, _ := os.ReadFile(cfgPath); !strings.Contains(string(data), `"repo-tools"`) {
		t.Fatalf("the launch file %s was not rewritten with repo-tools after the approval:\n%s", cfgPath, data)
	}

	s.Prompt("Call it again")
	s.WaitType("agent_end")
	trs = s.ToolResults()
	last := trs[len(trs)-1]
	if last.IsError || !strings.Contains(last.Text, "echo:after") {
		t.Fatalf("after approval: last tool result = %+v, want echo:after\n%s", last, s.describe())
	}
	s.Close()
	if w.MarkerStarts("repo-tools") == 0 {
		t.Error("the approved call did not start the marker server")
	}
}

// Editing an approved definition holds it back at the next start, even when
// the edit makes it eager.
func TestLaunchEditHoldsBack(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := repoWorld(t)
	if a := w.Exec(bins.PiagentMCP, "approve", "repo-tools", "--yes"); a.ExitCode != 0 {
		t.Fatalf("piagent-mcp approve: %s", a.Describe())
	}
	w.StartLLM(proxyEcho("repo-tools", "hi"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Call it"})
	requireExit0(t, r)
	if trs := r.ToolResults(); len(trs) != 1 || trs[0].IsError || !strings.Contains(trs[0].Text, "echo:hi") {
		t.Fatalf("approved: tool results = %+v\n%s", trs, r.Describe())
	}
	before := w.MarkerStarts("repo-tools")
	if before == 0 {
		t.Fatal("the approved call did not start the marker server")
	}

	srv := w.MarkerServer("repo-tools", "EXTRA=changed")
	srv["lifecycle"] = "eager"
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": srv}, nil)
	w.StartLLM(proxyEcho("repo-tools", "hi"))
	r = w.runLaunched(bins, PiOptions{Prompt: "Call it after the edit"})
	requireExit0(t, r)
	if !strings.Contains(r.Stderr, "held back MCP server repo-tools (approval-changed") {
		t.Errorf("stderr lacks the approval-changed notice:\n%s", r.Stderr)
	}
	if trs := r.ToolResults(); len(trs) != 1 || !trs[0].IsError {
		t.Errorf("after the edit: tool results = %+v, want one failed call", trs)
	}
	if after := w.MarkerStarts("repo-tools"); after != before {
		t.Errorf("the edited server started %d more time(s)", after-before)
	}
}

// issue 23: the launcher started by its full path with piagent off PATH and
// no PIAGENT_BIN hands its own path to the extension, so the guard answers
// (a proxy call to the unapproved server is blocked by piagent, not for
// want of a helper). The control, plain pi with the extension in the same
// environment, cannot find the helper and blocks every call saying so.
func TestLaunchByFullPathOffPATH(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	env := map[string]string{"PIAGENT_PI": PiCLI(), "PATH": deps.nodeBin + string(os.PathListSeparator) + "/usr/bin:/bin"}
	if p, err := exec.LookPath("piagent"); err == nil && !strings.HasPrefix(p, deps.nodeBin) {
		for _, dir := range filepath.SplitList(env["PATH"]) {
			if filepath.Dir(p) == dir {
				t.Skipf("piagent is installed in %s on this machine", dir)
			}
		}
	}
	opts := PiOptions{Prompt: "call the tool", Extensions: []string{extensionIndex()}, Env: env}

	control := repoWorld(t)
	control.SeedCache()
	control.StartLLM(proxyEcho("repo-tools", "hi"), Say("done"))
	r := control.RunPi(opts)
	requireExit0(t, r)
	if trs := r.ToolResults(); len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Text, "PIAGENT_BIN") {
		t.Fatalf("control: plain pi found a helper without PIAGENT_BIN or piagent on PATH: %+v", trs)
	}

	w := repoWorld(t)
	w.SeedCache()
	w.StartLLM(proxyEcho("repo-tools", "hi"), Say("done"))
	r = w.RunProcess(append([]string{bins.Piagent, "pi"}, PiFlags(opts)...), opts)
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Text, "pending-approval") || strings.Contains(trs[0].Text, "PIAGENT_BIN") {
		t.Errorf("through the launcher by full path: %+v", trs)
	}
	requireNoStart(t, w, "repo-tools")
}
