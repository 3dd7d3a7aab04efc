package cli

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
)

// TestKilledProjectAddBothOrNeither (issue 40, item 8): `piagent-mcp add
// --scope project` writes two files, the repository's .mcp.json and the
// approval store. SIGKILLed at random points, 200 times, it leaves the
// server either out of .mcp.json or in it and approved: never in it and
// waiting for an approval the person gave (before, the approval was
// written second, and a kill between the two left exactly that).
func TestKilledProjectAddBothOrNeither(t *testing.T) {
	if testing.Short() {
		t.Skip("200 kills")
	}
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{filepath.Join(home, ".pi"), proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	store, config := registry.ApprovalStore(home), filepath.Join(proj, ".mcp.json")
	env := append(os.Environ(), "HOME="+home, "PI_CODING_AGENT_DIR=", "PI_MCP_CONFIG_MODE=", "MCP_DIRECT_TOOLS=", "PIAGENT_NO_MCP_NOTICE=")
	add := func() *exec.Cmd {
		os.Remove(config)
		os.Remove(store)
		c := exec.Command(exe, "add", "docs", "--scope", "project", "--url", "https://docs.example/mcp")
		c.Args[0] = "piagent-mcp" // testscript.Main runs the command of that name
		c.Dir, c.Env = proj, env
		return c
	}
	state := func() string {
		g, err := gate.Load(gate.Options{Home: home, Cwd: proj, Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}})
		if err != nil {
			t.Fatal(err)
		}
		s, ok := g.Server("docs")
		if !ok {
			return "neither"
		}
		return s.State
	}
	// One whole run: how long the kills have to land in, and the control
	// that a finished add leaves the server approved.
	c := add()
	began := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	whole := time.Since(began)
	if st := state(); st == "neither" || st == gate.PendingApproval {
		t.Fatalf("a finished add left docs %s", st)
	}
	// Under load a later add takes longer than the one measured, and every
	// kill may land before the writes: the range grows by half after each
	// 50 kills that all left neither, up to 400 kills in all.
	kills := 200
	seen := map[string]int{}
	span := whole
	for i := 0; i < kills; i++ {
		if i > 0 && i%50 == 0 && seen["neither"] == i && kills < 400 {
			span += span / 2
			kills += 50
		}
		c := add()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(span))))
		c.Process.Kill()
		c.Wait()
		st := state()
		seen[st]++
		if st == gate.PendingApproval || st == gate.ApprovalChanged {
			t.Fatalf("a kill left docs in .mcp.json without its approval (%s)", st)
		}
	}
	t.Logf("%d kills in a %v add (kills within %v): %v", kills, whole.Round(time.Millisecond), span.Round(time.Millisecond), seen)
	if seen["neither"] == 0 || seen["neither"] == kills {
		t.Errorf("the kills did not land on both sides of the writes (%v): the test cannot tell", seen)
	}
}
