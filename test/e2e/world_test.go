package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// World is one isolated machine for a test: a fake home with Pi's agent dir,
// a project (a git work tree) where Pi starts, and a marker file that every
// marker MCP server appends to when it starts.
type World struct {
	t          testing.TB
	Dir        string // the test's temporary root
	Home       string // $HOME for Pi and the adapter
	AgentDir   string // $HOME/.pi/agent, also PI_CODING_AGENT_DIR
	Project    string // the working directory Pi starts in; has .git
	MarkerFile string // written by mcp-marker-server.mjs; absent until a server starts
	LLM        *FakeLLM
}

// NewWorld lays out an empty home and project under t.TempDir. The metadata
// cache is not seeded; call SeedCache for a spawn-free start.
func NewWorld(t testing.TB) *World {
	t.Helper()
	requireE2E(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &World{
		t:       t,
		Dir:     dir,
		Home:    filepath.Join(dir, "home"),
		Project: filepath.Join(dir, "project"),
		// inside the project: the one place a confined server may write
		MarkerFile: filepath.Join(dir, "project", ".marker.ndjson"),
	}
	w.AgentDir = filepath.Join(w.Home, ".pi", "agent")
	for _, d := range []string{w.AgentDir, filepath.Join(w.Project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.Write(filepath.Join(w.Project, ".git", "HEAD"), "ref: refs/heads/main\n")
	return w
}

// path resolves p against the world's root when it is relative.
func (w *World) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.Dir, p)
}

// HomeFile is a path under the fake home.
func (w *World) HomeFile(rel string) string { return filepath.Join(w.Home, rel) }

// ProjectFile is a path under the project.
func (w *World) ProjectFile(rel string) string { return filepath.Join(w.Project, rel) }

// Write creates a file (and its folders); a relative path is under Dir.
func (w *World) Write(p, content string) {
	w.t.Helper()
	p = w.path(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// WriteJSON writes v as indented JSON.
func (w *World) WriteJSON(p string, v any) {
	w.t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.Write(p, string(data)+"\n")
}

// Read returns a file's contents, or "" when it does not exist.
func (w *World) Read(p string) string {
	w.t.Helper()
	data, err := os.ReadFile(w.path(p))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return string(data)
}

// WriteMCP writes an MCP config file {"mcpServers": servers} plus any extra
// top-level keys (settings, imports, claudePlugins).
func (w *World) WriteMCP(p string, servers map[string]any, extra map[string]any) {
	w.t.Helper()
	doc := map[string]any{"mcpServers": servers}
	for k, v := range extra {
		doc[k] = v
	}
	w.WriteJSON(p, doc)
}

// CachePath is the adapter's metadata cache.
func (w *World) CachePath() string { return filepath.Join(w.AgentDir, "mcp-cache.json") }

// SeedCache writes an empty metadata cache. With a cache present the adapter
// does not bootstrap (connect to every server) at session start.
func (w *World) SeedCache() { w.Write(w.CachePath(), `{"version":1,"servers":{}}`+"\n") }

// MarkerServer is a server definition that runs mcp-marker-server.mjs with
// Node 22, reporting its starts under name. extraEnv entries are "K=V".
func (w *World) MarkerServer(name string, extraEnv ...string) map[string]any {
	env := map[string]any{"MARKER_FILE": w.MarkerFile, "MARKER_NAME": name}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return map[string]any{
		"command": deps.node,
		"args":    []any{Fixture("mcp-marker-server.mjs")},
		"env":     env,
	}
}

// MarkerLine is one start recorded by a marker server.
type MarkerLine struct {
	Event string `json:"event"`
	Name  string `json:"name"`
	PID   int    `json:"pid"`
	Cwd   string `json:"cwd"`
}

// MarkerLines returns every recorded start, in order.
func (w *World) MarkerLines() []MarkerLine {
	w.t.Helper()
	var out []MarkerLine
	sc := bufio.NewScanner(strings.NewReader(w.Read(w.MarkerFile)))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l MarkerLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			w.t.Fatalf("marker file %s: bad line %q: %v", w.MarkerFile, sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// MarkerStarts counts the recorded starts of the named server.
func (w *World) MarkerStarts(name string) int {
	n := 0
	for _, l := range w.MarkerLines() {
		if l.Name == name {
			n++
		}
	}
	return n
}
