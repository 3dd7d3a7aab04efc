package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
)

// approvedProject is a project whose .mcp.json runs `node a.js b.js` (both
// files in the project), approved on this machine with both files pinned.
// PATH (opts.Getenv) holds a node and a bash.
func approvedProject(t *testing.T) (opts Options) {
	t.Helper()
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	bin := filepath.Join(root, "bin")
	opts = Options{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == "PATH" {
			return bin
		}
		return ""
	}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{home, proj, bin} {
		must(os.MkdirAll(d, 0o755))
	}
	for _, c := range []string{"node", "bash"} {
		must(os.WriteFile(filepath.Join(bin, c), []byte("#!/bin/sh\n"), 0o755))
	}
	must(os.WriteFile(filepath.Join(proj, "a.js"), []byte("// a\n"), 0o644))
	must(os.WriteFile(filepath.Join(proj, "b.js"), []byte("// b\n"), 0o644))
	must(os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"s":{"command":"node","args":["a.js","b.js"]}}}`), 0o644))
	g, err := Load(opts)
	must(err)
	s, _ := g.Server("s")
	if s.State != PendingApproval || len(s.Pinned) != 2 {
		t.Fatalf("before approval: %s (%s), %d pinned; want pending-approval, 2 pinned", s.State, s.Reason, len(s.Pinned))
	}
	must(approval.Open(filepath.Join(home, ".pi", "piagent-mcp-approvals.json")).Update(func(d *approval.Data) error {
		d.Set(g.Project, "s", s.Consent(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)))
		return nil
	}))
	return opts
}

func stateOf(t *testing.T, opts Options) *Server {
	t.Helper()
	g, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := g.Server("s")
	if !ok {
		t.Fatal("server s is gone")
	}
	return s
}

// TestApprovalPinsTheDefinition: the approval holds for exactly the
// definition approved (the control: ready); an added argument, a changed
// command or env returns it to approval-changed, through the digest
// comparison alone (issue 41, G1: the pinned files are unchanged).
func TestApprovalPinsTheDefinition(t *testing.T) {
	t.Parallel()
	for _, edit := range []string{
		`{"mcpServers":{"s":{"command":"node","args":["a.js","b.js","--inspect=0.0.0.0:9229"]}}}`,
		`{"mcpServers":{"s":{"command":"bash","args":["a.js","b.js"]}}}`,
		`{"mcpServers":{"s":{"command":"node","args":["a.js","b.js"],"env":{"NODE_DEBUG":"x"}}}}`,
		`{"mcpServers":{"s":{"command":"node","args":["a.js","b.js"],"cwd":"."}}}`,
	} {
		opts := approvedProject(t)
		proj := opts.Cwd
		if s := stateOf(t, opts); s.State != Ready {
			t.Fatalf("control: the approved definition is %s (%s), want ready", s.State, s.Reason)
		}
		if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(edit), 0o644); err != nil {
			t.Fatal(err)
		}
		s := stateOf(t, opts)
		if s.State != ApprovalChanged || !strings.Contains(s.Reason, "definition changed") {
			t.Errorf("after %s: %s (%s), want approval-changed: the definition changed", edit, s.State, s.Reason)
		}
	}
}

// TestApprovalNoLongerRuns: a file the approval recorded that the
// definition no longer runs (b.js deleted, so the argument names nothing
// the gate can pin; the definition itself is unchanged) returns the server
// to approval-changed, naming the file (issue 41, G2).
func TestApprovalNoLongerRuns(t *testing.T) {
	t.Parallel()
	opts := approvedProject(t)
	proj := opts.Cwd
	if err := os.Remove(filepath.Join(proj, "b.js")); err != nil {
		t.Fatal(err)
	}
	s := stateOf(t, opts)
	if s.State != ApprovalChanged || !strings.Contains(s.Reason, "no longer runs") || !strings.Contains(s.Reason, "b.js") {
		t.Errorf("after b.js was deleted: %s (%s), want approval-changed: no longer runs b.js", s.State, s.Reason)
	}
	// A folder in its place (node runs b.js/index.js) is no approved file either.
	if err := os.MkdirAll(filepath.Join(proj, "b.js"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "b.js", "index.js"), []byte("require('child_process').exec('id')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, opts); s.State != ApprovalChanged {
		t.Errorf("after b.js became a folder: %s (%s), want approval-changed", s.State, s.Reason)
	}
}

// TestSwitchedOff (issue 38): the person's own switch in the approval store
// (approval.Decision.Off, what `piagent-mcp disable` records for a
// repository server) makes an approved server disabled, as a disabled
// entry would, with its approval kept; taken back, the server is ready
// again. A switch on a server no one approved also reads disabled.
func TestSwitchedOff(t *testing.T) {
	t.Parallel()
	opts := approvedProject(t)
	store := approval.Open(filepath.Join(opts.Home, ".pi", "piagent-mcp-approvals.json"))
	project, err := approval.ProjectKey(opts.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	set := func(off bool, decision string) {
		t.Helper()
		if err := store.Update(func(d *approval.Data) error {
			dec, _ := d.Get(project, "s")
			dec.Off = off
			if decision != "" {
				dec.Decision = decision
			}
			d.Set(project, "s", dec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if s := stateOf(t, opts); s.State != Ready {
		t.Fatalf("approved: %s (%s), want ready", s.State, s.Reason)
	}
	set(true, "")
	if s := stateOf(t, opts); s.State != Disabled || !strings.Contains(s.Reason, "piagent-mcp disable") {
		t.Errorf("switched off: %s (%s), want disabled by piagent-mcp disable", s.State, s.Reason)
	}
	set(false, "")
	if s := stateOf(t, opts); s.State != Ready {
		t.Errorf("switched back on: %s (%s), want ready, the approval kept", s.State, s.Reason)
	}
	set(true, "rejected")
	if s := stateOf(t, opts); s.State != Disabled {
		t.Errorf("rejected and switched off: %s (%s), want disabled", s.State, s.Reason)
	}
}
