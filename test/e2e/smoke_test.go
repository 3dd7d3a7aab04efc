package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The smoke tests pin the harness and the behaviour of Pi and the adapter
// that piagent is built against; none needs piagent itself.

// proxyEcho is the model calling the adapter's mcp proxy tool.
func proxyEcho(server, text string) Step {
	return Call("mcp", map[string]any{"tool": "echo", "server": server, "args": map[string]any{"text": text}})
}

// repoWorld is a world whose project .mcp.json declares the marker server
// repo-tools.
func repoWorld(t *testing.T) *World {
	w := NewWorld(t)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": w.MarkerServer("repo-tools")}, nil)
	return w
}

func requireExit0(t *testing.T, r *PiRun) {
	t.Helper()
	if r.ExitCode != 0 {
		t.Fatalf("pi exited %d, want 0\n%s", r.ExitCode, r.Describe())
	}
}

// Control: without a guard, a proxy call to a repository server starts it
// and returns its output.
func TestSmokeUnguardedProxyCallRuns(t *testing.T) {
	t.Parallel()
	w := repoWorld(t)
	w.SeedCache()
	llm := w.StartLLM(proxyEcho("repo-tools", "hi"))

	r := w.RunPi(PiOptions{Prompt: "Call the repo-tools echo tool"})
	requireExit0(t, r)

	trs := r.ToolResults()
	if len(trs) != 1 || trs[0].ToolName != "mcp" || trs[0].IsError || !strings.Contains(trs[0].Text, "echo:hi") {
		t.Fatalf("tool results = %+v, want one successful mcp result containing echo:hi\n%s", trs, r.Describe())
	}
	if got := w.MarkerStarts("repo-tools"); got == 0 {
		t.Errorf("marker has no start of repo-tools; lines: %+v", w.MarkerLines())
	}
	if got, want := r.FinalText(), "FINAL: echo:hi"; got != want {
		t.Errorf("final text = %q, want %q", got, want)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake model got %d requests, want 2", len(reqs))
	}
	if tools := reqs[0].ToolNames(); !slices.Contains(tools, "mcp") {
		t.Errorf("first request offered %v, want the mcp proxy among them", tools)
	}
	if msgs := reqs[1].ToolMessages(); len(msgs) != 1 || !strings.Contains(msgs[0], "echo:hi") {
		t.Errorf("second request's tool messages = %q, want one containing echo:hi", msgs)
	}
}

// Residual risk, measured: with no metadata cache the adapter connects to
// every configured server, repository servers included, before the model
// asks for anything. A guard at tool_call cannot stop this; the launcher
// (`piagent pi`, exclusive mode) is what closes it.
func TestSmokeBootstrapSpawnsWithoutToolCall(t *testing.T) {
	t.Parallel()
	w := repoWorld(t)
	w.StartLLM(Say("hello"))
	if _, err := os.Stat(w.CachePath()); err == nil {
		t.Fatal("cache exists before the run")
	}

	r := w.RunPi(PiOptions{Prompt: "Say hello"})
	requireExit0(t, r)

	if trs := r.ToolResults(); len(trs) != 0 {
		t.Fatalf("tool results = %+v, want none", trs)
	}
	if got := r.FinalText(); got != "hello" {
		t.Errorf("final text = %q, want hello", got)
	}
	if got := w.MarkerStarts("repo-tools"); got == 0 {
		t.Errorf("marker is empty: the adapter no longer bootstraps on a fresh home; " +
			"update the residual-risk notes (issue 6) and this test")
	}
	if _, err := os.Stat(w.CachePath()); err != nil {
		t.Errorf("bootstrap did not write the metadata cache: %v", err)
	}
}

// A tool_call guard that blocks everything: with a cache present nothing
// starts, and the model sees the block reason as the tool result.
func TestSmokeGuardBlocksAtToolCall(t *testing.T) {
	t.Parallel()
	w := repoWorld(t)
	w.SeedCache()
	llm := w.StartLLM(proxyEcho("repo-tools", "hi"))
	guardLog := w.path("guard.ndjson")

	r := w.RunPi(PiOptions{
		Prompt:     "Call the repo-tools echo tool",
		Extensions: []string{Fixture("guard-block-all.ts")},
		Env:        map[string]string{"GUARD_LOG": guardLog},
	})
	requireExit0(t, r)

	const reason = "GUARD_BLOCKED mcp server=repo-tools"
	blocked := r.Blocked()
	if len(blocked) != 1 || blocked[0].ToolName != "mcp" || blocked[0].Text != reason {
		t.Fatalf("blocked = %+v, want one mcp call blocked with %q\n%s", blocked, reason, r.Describe())
	}
	if lines := w.MarkerLines(); len(lines) != 0 {
		t.Errorf("marker server started %d time(s) despite the block: %+v", len(lines), lines)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake model got %d requests, want 2", len(reqs))
	}
	if msgs := reqs[1].ToolMessages(); len(msgs) != 1 || msgs[0] != reason {
		t.Errorf("model was shown tool messages %q, want [%q]", msgs, reason)
	}
	if got, want := r.FinalText(), "FINAL: "+reason; got != want {
		t.Errorf("final text = %q, want %q", got, want)
	}
	if log := w.Read(guardLog); !strings.Contains(log, `"event":"tool_call"`) || !strings.Contains(log, `"toolName":"mcp"`) {
		t.Errorf("guard log does not record the mcp tool_call:\n%s", log)
	}
}

// The RPC runner: two prompts in one session, each answered through the
// adapter.
func TestSmokeRPCSession(t *testing.T) {
	t.Parallel()
	w := repoWorld(t)
	w.SeedCache()
	w.StartLLM(proxyEcho("repo-tools", "one"), Say("first done"), proxyEcho("repo-tools", "two"))

	s := w.StartRPC(PiOptions{})
	id := s.Prompt("first")
	if resp := s.WaitResponse(id); resp["success"] != true {
		t.Fatalf("prompt response = %v", resp)
	}
	s.WaitType("agent_end")
	if got := s.FinalText(); got != "first done" {
		t.Fatalf("after the first prompt, final text = %q", got)
	}
	s.Prompt("second")
	s.WaitType("agent_end")
	if got, want := s.FinalText(), "FINAL: echo:two"; got != want {
		t.Errorf("after the second prompt, final text = %q, want %q", got, want)
	}
	var texts []string
	for _, tr := range s.ToolResults() {
		texts = append(texts, tr.Text)
	}
	if !slices.Equal(texts, []string{"echo:one", "echo:two"}) {
		t.Errorf("tool results = %q, want [echo:one echo:two]", texts)
	}
	if code := s.Close(); code != 0 {
		t.Errorf("pi exited %d after stdin closed\nstderr:\n%s", code, tail(s.Stderr(), 4000))
	}
	if w.MarkerStarts("repo-tools") == 0 {
		t.Error("marker is empty after two successful calls")
	}
}

// The repository's commands build; later end-to-end tests run them.
func TestBinariesBuild(t *testing.T) {
	b := Binaries(t)
	for _, p := range []string{b.Piagent, b.PiagentMCP} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// Direct tools and the marker server's optional second tool: with
// directTools on, the adapter registers <server>_<tool> (hyphens kept) once
// it knows the server's tools, here from the bootstrap of a fresh home.
func TestSmokeDirectToolExtraTool(t *testing.T) {
	t.Parallel()
	w := NewWorld(t)
	srv := w.MarkerServer("repo-tools", "MARKER_EXTRA_TOOL=shout")
	srv["directTools"] = true
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": srv}, nil)
	llm := w.StartLLM(Call("repo-tools_shout", map[string]any{"text": "loud"}))

	r := w.RunPi(PiOptions{Prompt: "Shout"})
	requireExit0(t, r)

	if tools := llm.Requests()[0].ToolNames(); !slices.Contains(tools, "repo-tools_echo") || !slices.Contains(tools, "repo-tools_shout") {
		t.Fatalf("offered tools %v, want repo-tools_echo and repo-tools_shout", tools)
	}
	if got, want := r.FinalText(), "FINAL: shout:loud"; got != want {
		t.Errorf("final text = %q, want %q\n%s", got, want, r.Describe())
	}
}

// Print mode: stdout is the final answer and no events are parsed.
func TestSmokePrintMode(t *testing.T) {
	t.Parallel()
	w := NewWorld(t)
	w.SeedCache()
	w.StartLLM(Say("printed answer"))

	r := w.RunPi(PiOptions{Mode: "print", Prompt: "Answer"})
	requireExit0(t, r)
	if got := strings.TrimSpace(r.Stdout); got != "printed answer" {
		t.Errorf("stdout = %q, want the final answer\n%s", got, r.Describe())
	}
	if r.Events != nil {
		t.Errorf("print mode parsed %d events", len(r.Events))
	}
}
