package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/paths"
)

// TestDifferentialToolPath compares piagent's reading of a file tool's path
// argument with Pi's own resolveToCwd, from the Pi under test (the suite
// runs on Pi 0.86.1 and on Pi 1.6.0), on a table of inputs.
func TestDifferentialToolPath(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	home, cwd := "/home/ana", "/home/ana/src/app"
	table := []string{
		".mcp.json", "./.mcp.json", "@.mcp.json", "@@.mcp.json", "@./.pi/mcp.json", "@~/.config/mcp/mcp.json",
		"~", "~/", "~/.pi/agent/settings.json", "@~/.pi/agent/settings.json", "~user/x", "~/../x", "a/~/b",
		"/etc/../home/ana/.mcp.json", "../app/.mcp.json", "sub/../../app/.pi/mcp.json", "//double//slash",
		"file:///home/ana/src/app/.mcp.json", "file://localhost/home/ana/src/app/.mcp.json",
		"file://LOCALHOST/home/ana/src/app/.mcp.json", "file:///home/ana/src/app/%2Emcp.json",
		"file:///home/ana/src/app/.pi%2Fmcp.json", "file:///home/ana/src/app/.pi%2fmcp.json", "file://example.com/x",
		"file:///home/ana/src/app/a%20b", "file:///home/ana/src/app/.pi/../.mcp.json", "file:///home/ana/src/app/x?y#z",
		"file:///home/ana/src\\app\\.mcp.json", "file:///home/ana/src/app/%zz", "file:///home/ana/%ff", "file:///home/ana/%C3%A9", "file:///home/ana/%", "file:/home/ana/x", "FILE:///x",
		"@file:///home/ana/src/app/.mcp.json", "\u00a0.mcp.json", ".mcp.json\u2003", "\u3000@x", "@\u00a0x",
		"", ".", "..", "@", "@/", "/", " .mcp.json",
	}
	var in bytes.Buffer
	for _, p := range table {
		line, _ := json.Marshal(map[string]string{"path": p, "cwd": cwd})
		in.Write(append(line, '\n'))
	}
	piDir := filepath.Dir(filepath.Dir(filepath.Dir(deps.piCLI)))
	cmd := exec.Command(deps.node, Fixture("resolve-path.mjs"), piDir)
	cmd.Env = []string{"PATH=" + deps.nodeBin, "HOME=" + home}
	cmd.Stdin = &in
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("resolve-path.mjs: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(&out)
	i := 0
	for sc.Scan() {
		var want struct{ Resolved, Error string }
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := paths.ToolPath(home, cwd, table[i])
		switch {
		case want.Error != "" && ok:
			t.Errorf("%q: Pi %s throws (%s), piagent resolves %s", table[i], deps.pi, want.Error, got)
		case want.Error == "" && !ok:
			t.Errorf("%q: Pi %s resolves %s, piagent refuses", table[i], deps.pi, want.Resolved)
		case want.Error == "" && got != want.Resolved:
			t.Errorf("%q: Pi %s resolves %s, piagent %s", table[i], deps.pi, want.Resolved, got)
		}
		i++
	}
	if i != len(table) {
		t.Fatalf("Pi answered %d of %d", i, len(table))
	}
	if !t.Failed() {
		t.Logf("%d paths: piagent and Pi %s agree on each", len(table), deps.pi)
	}
}
