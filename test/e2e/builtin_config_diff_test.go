package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/piagent/piagent/internal/mcpconfig"
)

// TestDifferentialBuiltinConfig has Pi 1.6's own loadMcpConfig read a table
// of global and project files, trusted and not, and checks that
// mcpconfig.Builtin lists the same servers, each enabled or not, and the
// same number of errors (issue 19, item 1: the built-in is a reader like the
// others, by its own rules).
func TestDifferentialBuiltinConfig(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	if deps.pi != "1.6" {
		t.Skipf("Pi %s has no built-in MCP client", deps.pi)
	}
	cases := []struct{ name, global, project string }{
		{"nothing", "", ""},
		{"global only", `{"mcpServers": {"a": {"command": "x"}, "b": {"url": "https://b.example/mcp"}}}`, ""},
		{"enabled false honoured, disabled ignored", `{"mcpServers": {"a": {"command": "x", "enabled": false}, "b": {"command": "y", "disabled": true}}}`, ""},
		{"project adds and replaces", `{"mcpServers": {"a": {"command": "x"}}}`, `{"mcpServers": {"a": {"command": "z"}, "r": {"command": "r", "args": ["t.js"]}}}`},
		{"project override switches a global off", `{"mcpServers": {"a": {"command": "x"}}}`, `{"mcpServers": {"a": {"enabled": false}}}`},
		{"project override with disabled is refused", `{"mcpServers": {"a": {"command": "x"}}}`, `{"mcpServers": {"a": {"disabled": true, "enabled": false}}}`},
		{"override of nothing is refused", "", `{"mcpServers": {"ghost": {"enabled": true}}}`},
		{"piagent disable of a project server", "", `{"mcpServers": {"r": {"command": "r", "disabled": true, "enabled": false}}}`},
		{"no command nor url", `{"mcpServers": {"a": {"args": ["x"]}}}`, ""},
		{"comments are not JSON", "// mine\n{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}", ""},
		{"trailing comma is not JSON", `{"mcpServers": {"a": {"command": "x"},}}`, ""},
		{"BOM", "\ufeff{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}", ""},
		{"mcpServers not an object", `{"mcpServers": []}`, ""},
		{"no mcpServers", `{"other": 1}`, ""},
		{"server not an object", `{"mcpServers": {"a": 3, "b": {"command": "y"}}}`, ""},
	}
	piDir := filepath.Dir(filepath.Dir(filepath.Dir(deps.piCLI)))
	for _, tc := range cases {
		for _, trusted := range []bool{false, true} {
			agent, cwd := t.TempDir(), t.TempDir()
			if tc.global != "" {
				os.WriteFile(filepath.Join(agent, "mcp.json"), []byte(tc.global), 0o644)
			}
			if tc.project != "" {
				os.MkdirAll(filepath.Join(cwd, ".pi"), 0o755)
				os.WriteFile(filepath.Join(cwd, ".pi", "mcp.json"), []byte(tc.project), 0o644)
			}
			tr := "0"
			if trusted {
				tr = "1"
			}
			out, err := exec.Command(deps.node, Fixture("builtin-config.mjs"), piDir, agent, cwd, tr).Output()
			if err != nil {
				t.Fatalf("%s: builtin-config.mjs: %v", tc.name, err)
			}
			var pi struct {
				Servers []struct {
					Name    string
					Enabled bool
					Scope   string
				}
				Errors int
			}
			if err := json.Unmarshal(out, &pi); err != nil {
				t.Fatal(err)
			}
			type row struct {
				Name    string
				Enabled bool
			}
			var want, got []row
			for _, s := range pi.Servers {
				want = append(want, row{s.Name, s.Enabled})
			}
			v := mcpconfig.Builtin(agent, cwd, trusted)
			for _, s := range v.Servers {
				got = append(got, row{s.Name, s.Enabled})
			}
			sortRows := func(r []row) {
				slices.SortFunc(r, func(a, b row) int {
					if a.Name < b.Name {
						return -1
					}
					if a.Name > b.Name {
						return 1
					}
					return 0
				})
			}
			sortRows(want)
			sortRows(got)
			if !slices.Equal(want, got) || pi.Errors != len(v.Errors) {
				t.Errorf("%s (trusted %v): Pi %s loads %v with %d errors; piagent %v with %d errors %v", tc.name, trusted, deps.pi, want, pi.Errors, got, len(v.Errors), v.Errors)
			}
		}
	}
	if !t.Failed() {
		t.Logf("%d configurations, trusted and not: piagent and Pi %s agree on each", len(cases), deps.pi)
	}
}
