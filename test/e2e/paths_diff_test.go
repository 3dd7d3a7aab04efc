package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
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

// TestDifferentialPiForms (issue 39, item 6): for a no-break-space write
// and the five read variants, the file the Pi under test really opens
// (resolveToCwd, resolveReadPath, on files that exist on disk in the
// macOS form) is the protected one, and piagent's policy blocks the call
// as written. The control: Pi opens the macOS form, not the name written.
func TestDifferentialPiForms(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	cwd := t.TempDir()
	cases := []struct {
		written, onDisk string
		read            bool
	}{
		{"secret\u00a0file.txt", "secret file.txt", false},
		{"secret\u00a0file.txt", "secret file.txt", true},
		{"Screenshot 1 PM.png", "Screenshot 1\u202fPM.png", true},
		{"caf\u00e9.note", "cafe\u0301.note", true},
		{"it's.note", "it\u2019s.note", true},
		{"r\u00e9sum\u00e9 d'\u00e9t\u00e9.note", "re\u0301sume\u0301 d\u2019e\u0301te\u0301.note", true},
	}
	var in bytes.Buffer
	var protected []string
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(cwd, c.onDisk), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		protected = append(protected, c.onDisk)
		line, _ := json.Marshal(map[string]any{"path": c.written, "cwd": cwd, "read": c.read})
		in.Write(append(line, '\n'))
	}
	piDir := filepath.Dir(filepath.Dir(filepath.Dir(deps.piCLI)))
	cmd := exec.Command(deps.node, Fixture("resolve-path.mjs"), piDir)
	cmd.Env = []string{"PATH=" + deps.nodeBin, "HOME=/nonexistent"}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("resolve-path.mjs: %v", err)
	}
	user, _ := json.Marshal(map[string]any{"version": 1, "protectedPaths": protected})
	pol, err := policy.Merge(policy.Input{File: "/nonexistent/.pi/piagent-policy.json", Data: user}, policy.Input{})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		c := cases[i]
		var pi struct{ Resolved, Error string }
		json.Unmarshal(sc.Bytes(), &pi)
		if pi.Resolved != filepath.Join(cwd, c.onDisk) {
			t.Errorf("control %q: Pi %s opens %q, not the file on disk %q", c.written, deps.pi, pi.Resolved, c.onDisk)
			continue
		}
		tool, in := "write", map[string]any{"path": c.written, "content": "x"}
		if c.read {
			tool, in = "read", map[string]any{"path": c.written}
		}
		insp := policy.Inspect(policy.Call{ToolName: tool, Input: in})
		d := pol.DecideInspection(&insp, policy.Facts{Home: "/nonexistent", Cwd: cwd, ProjectRoot: cwd})
		if d.Action != policy.ActionBlock || d.Code != policy.CodeProtectedPath {
			t.Errorf("%s %q: Pi %s opens the protected %q, piagent answers %+v", tool, c.written, deps.pi, c.onDisk, d)
		}
	}
}
