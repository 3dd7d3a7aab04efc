package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/toolname"
)

// TestDifferentialBuiltinToolName has Pi 1.6's own createMcpToolName name
// tools of a table of servers, plain and hashed, and checks that
// toolname.OwnersOfBuiltin maps every name back to its server (issue 19:
// the guard knows the built-in's tools).
func TestDifferentialBuiltinToolName(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	if deps.pi != "1.6" {
		t.Skipf("Pi %s has no built-in MCP client", deps.pi)
	}
	servers := []string{"repo-tools", "repo_tools2", "a.b c", "ünï", "emoji-😀", "x", "x__y", "github", strings.Repeat("long", 16)}
	tools := []string{"echo", "get-file", "a.b/c", strings.Repeat("t", 60), "__", "ü"}
	type row struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
		Taken  bool   `json:"taken"`
	}
	var table []row
	var in bytes.Buffer
	for _, s := range servers {
		for _, tl := range tools {
			for _, taken := range []bool{false, true} {
				r := row{s, tl, taken}
				table = append(table, r)
				line, _ := json.Marshal(r)
				in.Write(append(line, '\n'))
			}
		}
	}
	modules := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(deps.piCLI)))))
	cmd := exec.Command(deps.node, Fixture("builtin-tool-name.mjs"), modules)
	cmd.Env = []string{"PATH=" + deps.nodeBin}
	cmd.Stdin = &in
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("builtin-tool-name.mjs: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&out)
	i := 0
	for sc.Scan() {
		var got struct{ Name string }
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		r := table[i]
		owners := toolname.OwnersOfBuiltin(got.Name, servers)
		if !slices.Contains(owners, r.Server) {
			t.Errorf("Pi names %q's tool %q %s; piagent finds owners %v", r.Server, r.Tool, got.Name, owners)
		}
		i++
	}
	if i != len(table) {
		t.Fatalf("Pi answered %d of %d", i, len(table))
	}
	if !t.Failed() {
		t.Logf("%d names from Pi %s's createMcpToolName: each maps back to its server", len(table), deps.pi)
	}
}
