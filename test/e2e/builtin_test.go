package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// brokenAdapter is a local package that calls itself pi-mcp-adapter but
// registers nothing: piagent's extension leaves /mcp to it, and Pi 1.6's
// built-in MCP client loads after all. It stands for the residual case of
// issue 19, item 2: an adapter that is listed but does not take /mcp (Pi
// skips a package that fails to install with a warning; one that throws
// stops Pi).
func brokenAdapter(w *World) string {
	dir := w.HomeFile("broken-adapter")
	w.Write(filepath.Join(dir, "package.json"), `{"name": "pi-mcp-adapter", "version": "2.36.0", "type": "module", "pi": {"extensions": ["./index.ts"]}}`)
	w.Write(filepath.Join(dir, "index.ts"), `export default function () {}`+"\n")
	return dir
}

// When Pi's built-in MCP client is loaded anyway, the session notice says
// so, and every built-in surface that reaches the unapproved server is
// blocked with the approve command: its direct tool, the resource read
// naming it, and the resource list that reaches every server. The positive
// control is the same world with the server approved: the direct tool
// answers.
func TestBuiltinToolsGated(t *testing.T) {
	t.Parallel()
	if deps.pi != "1.6" {
		t.Skipf("Pi %s has no built-in MCP client", deps.pi)
	}
	bins := Binaries(t)
	world := func() *World {
		w := NewWorld(t)
		srv := w.MarkerServer("repo-tools")
		srv["exposure"] = "direct"
		w.WriteMCP(w.ProjectFile(".pi/mcp.json"), map[string]any{"repo-tools": srv}, nil)
		w.Trust()
		w.Install(extensionDir(), brokenAdapter(w))
		return w
	}
	steps := []Step{
		// the built-in connects at session start; give it a moment
		Call("bash", map[string]any{"command": "sleep 2"}),
		Call("mcp__repo_tools__echo", map[string]any{"text": "hi"}),
		Call("read_mcp_resource", map[string]any{"server": "repo-tools", "uri": "marker://x"}),
		Call("list_mcp_resources", map[string]any{}),
		Say("done"),
	}
	run := func(w *World) *PiRun {
		w.StartLLM(steps...)
		opts := PiOptions{Prompt: "Use the repo tools", Installed: true, Env: map[string]string{"PIAGENT_BIN": bins.Piagent, "PIAGENT_PI": PiCLI()}}
		r := w.RunPi(opts)
		requireExit0(t, r)
		return r
	}

	w := world()
	r := run(w)
	if !strings.Contains(r.Stderr, "built-in MCP client is loaded in this session") {
		t.Errorf("no notice that the built-in loaded:\n%s", r.Stderr)
	}
	got := map[string]ToolResult{}
	for _, tr := range r.ToolResults() {
		got[tr.ToolName] = tr
	}
	for _, tool := range []string{"mcp__repo_tools__echo", "read_mcp_resource", "list_mcp_resources"} {
		tr, ok := got[tool]
		if !ok {
			t.Errorf("%s: no result (the built-in did not offer it?)\n%s", tool, r.Describe())
			continue
		}
		if !tr.IsError || !strings.Contains(tr.Text, "piagent") || !strings.Contains(tr.Text, "approve repo-tools") {
			t.Errorf("%s: not blocked by piagent with the approve command: %+v", tool, tr)
		}
	}

	// positive control: approved, the direct tool answers through the built-in
	ok := world()
	if a := ok.Exec(bins.PiagentMCP, "approve", "repo-tools", "--yes"); a.ExitCode != 0 {
		t.Fatalf("approve: %s", a.Describe())
	}
	r = run(ok)
	for _, tr := range r.ToolResults() {
		if tr.ToolName == "mcp__repo_tools__echo" {
			if tr.IsError || !strings.Contains(tr.Text, "hi") {
				t.Errorf("approved server's tool through the built-in: %+v", tr)
			}
			return
		}
	}
	t.Errorf("approved: no mcp__repo_tools__echo result\n%s", r.Describe())
}
