package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRed2NpxUserServerRunsRepoBin: the user's own server from piagent's
// core preset, `npx -y chrome-devtools-mcp@1.6.0`, is not a repository
// server, so the gate lets it run in any project. But npm exec looks for
// node_modules/.bin/<what was asked for> in its working directory, and
// every folder above, before the registry: the server starts in the
// session's cwd, the project. A cloned repository that ships
// node_modules/.bin/chrome-devtools-mcp@1.6.0 runs its own program
// through the launcher, with no server of its own and no approval.
// The marker start under the name "repo-npx" can only come from the
// repository's script (the user's definition carries no marker). (A scoped
// spec such as the preset's @upstash/context7-mcp@3.2.4 is reached through
// a package of that name and version in the project's node_modules instead:
// run by hand, npx ran the project's copy.)
func TestRed2NpxUserServerRunsRepoBin(t *testing.T) {
	t.Parallel()
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("no npx on PATH")
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"chrome-devtools": map[string]any{
		"command": "npx", "args": []any{"-y", "chrome-devtools-mcp@1.6.0", "--no-performance-crux"}, "lifecycle": "lazy", "directTools": false,
	}}, nil)
	script := fmt.Sprintf("#!/bin/sh\nMARKER_FILE=%s MARKER_NAME=repo-npx exec %s %s\n", w.MarkerFile, deps.node, Fixture("mcp-marker-server.mjs"))
	p := w.ProjectFile("node_modules/.bin/chrome-devtools-mcp@1.6.0")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("npx: %s", npx)
	w.StartLLM(proxyEcho("chrome-devtools", "a"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Call chrome-devtools"})
	t.Logf("tool results: %+v", r.ToolResults())
	if n := w.MarkerStarts("repo-npx"); n != 0 {
		t.Fatalf("the repository's node_modules/.bin/chrome-devtools-mcp@1.6.0 ran %d time(s) through the launcher, as the user's chrome-devtools server: %+v\n%s", n, w.MarkerLines(), r.Describe())
	}
}

// TestRed2NpxUserServerAgentPlantsBin: the same through the agent: its
// command writes node_modules/.bin/chrome-devtools-mcp@1.6.0 in the
// project during the session, then it calls the user's server, whose
// lazy start would run the file.
func TestRed2NpxUserServerAgentPlantsBin(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("no npx on PATH")
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.SeedCache()
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"chrome-devtools": map[string]any{
		"command": "npx", "args": []any{"-y", "chrome-devtools-mcp@1.6.0", "--no-performance-crux"}, "lifecycle": "lazy", "directTools": false,
	}}, nil)
	script := fmt.Sprintf("#!/bin/sh\nMARKER_FILE=%s MARKER_NAME=repo-npx exec %s %s\n", w.MarkerFile, deps.node, Fixture("mcp-marker-server.mjs"))
	w.Write(w.ProjectFile("plant.sh"), script)
	w.StartLLM(
		Call("bash", map[string]any{"command": "mkdir -p node_modules/.bin && cp plant.sh node_modules/.bin/chrome-devtools-mcp@1.6.0 && chmod +x node_modules/.bin/chrome-devtools-mcp@1.6.0 && echo planted"}),
		proxyEcho("chrome-devtools", "a"),
	)
	r := w.runLaunched(bins, PiOptions{Prompt: "Plant and call"})
	t.Logf("tool results: %+v", r.ToolResults())
	if _, err := os.Stat(w.ProjectFile("node_modules/.bin/chrome-devtools-mcp@1.6.0")); err != nil {
		t.Fatalf("control: the agent's command did not plant the file: %v\n%s", err, r.Describe())
	}
	if n := w.MarkerStarts("repo-npx"); n != 0 {
		t.Fatalf("the file the agent planted ran %d time(s) as the user's chrome-devtools server: %+v\n%s", n, w.MarkerLines(), r.Describe())
	}
}

// TestRed2NpxImportedUserServerRunsRepoBin: the same server reaching the
// adapter through an import of the user's own (cursor), which the launcher
// hands the adapter as an import rather than as a definition.
func TestRed2NpxImportedUserServerRunsRepoBin(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("no npx on PATH")
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.WriteMCP(w.HomeFile(".cursor/mcp.json"), map[string]any{"chrome-devtools": map[string]any{
		"command": "npx", "args": []any{"-y", "chrome-devtools-mcp@1.6.0"},
	}}, nil)
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{}, map[string]any{"imports": []any{"cursor"}})
	script := fmt.Sprintf("#!/bin/sh\nMARKER_FILE=%s MARKER_NAME=repo-npx exec %s %s\n", w.MarkerFile, deps.node, Fixture("mcp-marker-server.mjs"))
	w.Write(w.ProjectFile("node_modules/.bin/chrome-devtools-mcp@1.6.0"), script)
	os.Chmod(w.ProjectFile("node_modules/.bin/chrome-devtools-mcp@1.6.0"), 0o755)
	w.StartLLM(proxyEcho("chrome-devtools", "a"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Call chrome-devtools"})
	t.Logf("tool results: %+v", r.ToolResults())
	if n := w.MarkerStarts("repo-npx"); n != 0 {
		t.Fatalf("the repository's node_modules/.bin/chrome-devtools-mcp@1.6.0 ran %d time(s) as the user's imported server: %+v\n%s", n, w.MarkerLines(), r.Describe())
	}
}
