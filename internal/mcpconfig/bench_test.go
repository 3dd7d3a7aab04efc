package mcpconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bigFixture spreads n servers over every file layer, three import kinds
// (two through layer imports, all through host discovery), an Agent
// Plugin and a Pi package; a fifth of the names repeat across layers so
// merges happen.
func bigFixture(tb testing.TB, n int) string {
	tb.Helper()
	files := []string{
		"home/.config/mcp/mcp.json", "home/.agents/mcp.json", "home/.agents/mcp/mcp.json", "home/.pi/agent/mcp.json",
		"home/work/.mcp.json", "home/work/proj/.mcp.json", "home/work/proj/.pi/mcp.json",
		"home/.cursor/mcp.json", "home/.windsurf/mcp.json", "home/.claude/mcp.json", "home/work/proj/.vscode/mcp.json",
		"home/plugin/mcp.json", "home/work/proj/.pi/pkg/mcp.json",
	}
	per := n / len(files)
	var b strings.Builder
	for i, f := range files {
		servers := map[string]any{}
		for j := 0; j < per; j++ {
			name := fmt.Sprintf("s%d_%d", i, j)
			if j%5 == 0 {
				name = fmt.Sprintf("shared%d", j)
			}
			e := map[string]any{"command": "cmd", "args": []any{f, fmt.Sprint(j)}, "env": map[string]any{"K": "${V}"}}
			if j%3 == 0 {
				e = map[string]any{"url": fmt.Sprintf("https://h%d.example/mcp", j), "headers": map[string]any{"A": "${T}"}}
			}
			if f == "home/plugin/mcp.json" {
				e = map[string]any{"type": "stdio", "command": "node", "args": []any{"x"}}
			}
			servers[name] = e
		}
		doc := map[string]any{"mcpServers": servers}
		switch f {
		case "home/.pi/agent/mcp.json":
			doc["settings"] = map[string]any{"ancestorConfigRoots": []any{"~/work"}, "hostConfigDiscovery": "on", "agentPluginPaths": []any{"~/plugin"}}
			doc["imports"] = []any{"cursor"}
		case "home/work/proj/.mcp.json":
			doc["imports"] = []any{"vscode", "windsurf"}
		case "home/plugin/mcp.json":
			doc["$schema"] = agentMCPSchema
		}
		data, _ := json.MarshalIndent(doc, "", "  ")
		comment := "// generated\n"
		if f == "home/plugin/mcp.json" {
			comment = "" // Agent Plugin files are strict JSON
		}
		fmt.Fprintf(&b, "-- %s --\n%s%s\n", f, comment, data)
	}
	b.WriteString("-- home/plugin/plugin.json --\n" + pluginManifest + "\n")
	b.WriteString("-- home/work/proj/.pi/settings.json --\n{\"packages\": [\"./pkg\"]}\n")
	b.WriteString("-- home/work/proj/.pi/pkg/package.json --\n{\"name\": \"pkg\", \"pi\": {\"mcp\": \"mcp.json\"}}\n")
	return fixture(tb, b.String())
}

func TestBigFixture(t *testing.T) {
	t.Parallel()
	root := bigFixture(t, 1000)
	v := loadAt(t, root, "home/work/proj", nil)
	layers := map[string]bool{}
	for _, s := range v.Servers {
		layers[s.Layer] = true
	}
	for _, id := range []string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerAncestor, LayerSharedProject, LayerPiProject, LayerHost, LayerAgentPlugin, LayerPackage} {
		if !layers[id] {
			t.Errorf("no server from layer %s", id)
		}
	}
	if len(v.Servers) < 700 {
		t.Errorf("only %d servers", len(v.Servers))
	}
	if len(v.Skipped) != 0 {
		t.Errorf("skipped: %+v", v.Skipped)
	}
}

func BenchmarkLoad1000(b *testing.B) {
	root := bigFixture(b, 1000)
	opts := Options{Home: filepath.Join(root, "home"), Cwd: filepath.Join(root, "home/work/proj")}
	b.ReportAllocs()
	for b.Loop() {
		v, err := Load(opts)
		if err != nil || len(v.Servers) == 0 {
			b.Fatal(err)
		}
	}
}

// TestReadFilesSideBySide: reading the layers' files side by side gives
// the view reading them one by one gives, skipped files in the same order.
// Not parallel: it sets parallelBytes.
func TestReadFilesSideBySide(t *testing.T) {
	root := bigFixture(t, 1000)
	// two broken layers, one global and one in the project
	for _, f := range []string{"home/.agents/mcp.json", "home/work/proj/.pi/mcp.json"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(`{"mcpServers": {"x": }`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(b int64) { parallelBytes = b }(parallelBytes)
	views := map[string]*View{}
	for name, bytes := range map[string]int64{"side by side": 0, "one by one": math.MaxInt64} {
		parallelBytes = bytes
		views[name] = loadAt(t, root, "home/work/proj", nil)
	}
	a, b := views["side by side"], views["one by one"]
	if len(a.Skipped) != 2 || len(a.Servers) < 700 {
		t.Fatalf("%d skipped, %d servers: the fixture is not what the test needs", len(a.Skipped), len(a.Servers))
	}
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("side by side differs (-one by one +side by side):\n%s", diff)
	}
}
