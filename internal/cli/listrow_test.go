package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListColour: on a terminal the states are coloured and the columns
// stay aligned; NO_COLOR and a pipe get plain text.
func TestListColour(t *testing.T) {
	home, proj := fixture(t)
	run := func(width int, noColor string) string {
		var out, errb bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: proj, Home: home, Width: width,
			Environ: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=" + noColor}}
		Main("piagent-mcp", []string{"list"}, env)
		return out.String()
	}
	if got := run(0, ""); strings.Contains(got, "\x1b") {
		t.Errorf("a pipe got colour:\n%q", got)
	}
	if got := run(120, "1"); strings.Contains(got, "\x1b") {
		t.Errorf("NO_COLOR got colour:\n%q", got)
	}
	got := run(120, "")
	if !strings.Contains(got, "\x1b[33mpending-approval\x1b[0m") && !strings.Contains(got, "\x1b[31mpending-approval\x1b[0m") {
		t.Errorf("no colour on a terminal:\n%q", got)
	}
	// Aligned: TRANSPORT starts at the same column in every line.
	var at []int
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		i := strings.Index(l, "\x1b[0m") + len("\x1b[0m")
		at = append(at, i+len(l[i:])-len(strings.TrimLeft(l[i:], " ")))
	}
	for _, i := range at[1:] {
		if i != at[0] {
			t.Errorf("columns not aligned: %v\n%s", at, got)
		}
	}
}

// TestListPipeWhole: a pipe gets every TARGET whole, however long (issue
// 42: list | cat clipped it at 60 characters); a terminal 80 columns wide
// gets it clipped.
func TestListPipeWhole(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	long := "/opt/tools/a-rather-long-path/to/an/mcp-server-binary --config /etc/mcp/server-config.json --verbose"
	if err := os.MkdirAll(filepath.Join(home, ".config", "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "mcp", "mcp.json"), []byte(`{"mcpServers":{"long":{"command":"/opt/tools/a-rather-long-path/to/an/mcp-server-binary","args":["--config","/etc/mcp/server-config.json","--verbose"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(width int) string {
		var out, errb bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: proj, Home: home, Width: width,
			Environ: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}}
		Main("piagent-mcp", []string{"list"}, env)
		return out.String() + errb.String()
	}
	if got := run(0); !strings.Contains(got, long) {
		t.Errorf("a pipe did not get the whole target:\n%s", got)
	}
	if got := run(80); strings.Contains(got, long) || !strings.Contains(got, "…") {
		t.Errorf("control: an 80-column terminal got the whole target:\n%s", got)
	}
}
