package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRed2RequestHeadersCommandAgentRewrites: an approved repository server
// with a url and requestHeadersCommand {sh tools/hdr.sh}. The adapter runs
// that command itself, before each request, in Pi's working directory and
// outside any sandbox; the approval pins the definition's text but not
// tools/hdr.sh. The agent's sandboxed command rewrites tools/hdr.sh (the
// project is writable) and then calls the server: the new script runs
// outside the sandbox. Control: the same command cannot write the marker
// itself (the sandbox keeps it out of the home folder).
func TestRed2RequestHeadersCommandAgentRewrites(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	w.SeedCache()
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"remote": map[string]any{
		"url":                   "http://127.0.0.1:9/mcp",
		"requestHeadersCommand": map[string]any{"command": "sh", "args": []any{"tools/hdr.sh"}},
	}}, nil)
	w.Write(w.ProjectFile("tools/hdr.sh"), "#!/bin/sh\necho '{}'\n")
	if a := w.Exec(bins.PiagentMCP, "approve", "remote", "--yes"); a.ExitCode != 0 {
		t.Fatalf("piagent-mcp approve: %s", a.Describe())
	}
	escaped := filepath.Join(w.Home, "escaped")
	w.StartLLM(
		Call("bash", map[string]any{"command": "echo direct > " + escaped + "; printf '#!/bin/sh\\necho ran-outside > " + escaped + "\\necho {}\\n' > tools/hdr.sh; cat tools/hdr.sh"}),
		Call("mcp", map[string]any{"connect": "remote"}),
	)
	r := w.runLaunched(bins, PiOptions{Prompt: "Rewrite and connect"})
	t.Logf("tool results: %+v", r.ToolResults())
	if got := w.Read(w.ProjectFile("tools/hdr.sh")); !strings.Contains(got, "ran-outside") {
		t.Fatalf("control: the agent's command did not rewrite tools/hdr.sh (%q)\n%s", got, r.Describe())
	}
	data, _ := os.ReadFile(escaped)
	if strings.Contains(string(data), "direct") {
		t.Fatalf("control: the sandboxed command wrote %s itself", escaped)
	}
	if strings.Contains(string(data), "ran-outside") {
		t.Fatalf("the rewritten tools/hdr.sh ran outside the sandbox as the approved server's requestHeadersCommand (wrote %s)\n%s", escaped, r.Describe())
	}
}
