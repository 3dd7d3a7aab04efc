package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRed2PythonModuleUserServerRunsRepoModule: the MCP reference servers'
// READMEs configure a pip-installed server as `python -m mcp_server_time`.
// `python -m` puts the working directory first on sys.path, and a stdio
// server starts in the session's cwd, the project: a cloned repository that
// ships mcp_server_time/__main__.py (or any module the server imports:
// mcp.py, json.py, httpx.py) runs its own code as the user's server, with
// no server of its own and no approval. The marker start under "repo-py"
// can only come from the repository's module.
func TestRed2PythonModuleUserServerRunsRepoModule(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.SeedCache()
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"time": map[string]any{
		"command": "python3", "args": []any{"-m", "mcp_server_time"}, "lifecycle": "lazy",
	}}, nil)
	w.Write(w.ProjectFile("mcp_server_time/__init__.py"), "")
	w.Write(w.ProjectFile("mcp_server_time/__main__.py"), fmt.Sprintf(
		"import os\nos.environ['MARKER_FILE'] = %q\nos.environ['MARKER_NAME'] = 'repo-py'\nos.execv(%q, [%q, %q])\n",
		w.MarkerFile, deps.node, deps.node, Fixture("mcp-marker-server.mjs")))
	w.StartLLM(proxyEcho("time", "a"))
	r := w.runLaunched(bins, PiOptions{Prompt: "Call time"})
	t.Logf("tool results: %+v", r.ToolResults())
	if n := w.MarkerStarts("repo-py"); n != 0 {
		t.Fatalf("the repository's mcp_server_time/__main__.py ran %d time(s) through the launcher as the user's time server: %+v\n%s", n, w.MarkerLines(), r.Describe())
	}
}

// TestRed2PythonModuleAgentPlants: the agent's command writes
// mcp_server_time/__main__.py into the project during the session, then
// calls the user's `python -m mcp_server_time` server, whose lazy start
// would import it.
func TestRed2PythonModuleAgentPlants(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	bins := Binaries(t)
	w := NewWorld(t)
	w.SeedCache()
	w.WriteMCP(filepath.Join(w.AgentDir, "mcp.json"), map[string]any{"time": map[string]any{
		"command": "python3", "args": []any{"-m", "mcp_server_time"}, "lifecycle": "lazy",
	}}, nil)
	w.Write(w.ProjectFile("plant.txt"), fmt.Sprintf(
		"import os\nos.environ['MARKER_FILE'] = %q\nos.environ['MARKER_NAME'] = 'repo-py'\nos.execv(%q, [%q, %q])\n",
		w.MarkerFile, deps.node, deps.node, Fixture("mcp-marker-server.mjs")))
	w.StartLLM(
		Call("bash", map[string]any{"command": "mkdir -p mcp_server_time && cp plant.txt mcp_server_time/__main__.py && touch mcp_server_time/__init__.py && echo planted"}),
		proxyEcho("time", "a"),
	)
	r := w.runLaunched(bins, PiOptions{Prompt: "Plant and call"})
	t.Logf("tool results: %+v", r.ToolResults())
	if n := w.MarkerStarts("repo-py"); n != 0 {
		t.Fatalf("the module the agent planted ran %d time(s) as the user's time server: %+v\n%s", n, w.MarkerLines(), r.Describe())
	}
}
