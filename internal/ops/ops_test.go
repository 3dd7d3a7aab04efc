package ops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/piagent/piagent/internal/approval"
)

// world is a fake home with a project declaring the repository server
// "repo", and the person's own server "mine".
func world(t *testing.T) (*Ops, string) {
	t.Helper()
	home, project := t.TempDir(), t.TempDir()
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	os.MkdirAll(filepath.Join(home, ".pi", "agent"), 0o700)
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"repo": {"url": "https://r.example/mcp"}}}`), 0o644)
	os.WriteFile(filepath.Join(home, ".pi", "agent", "mcp.json"), []byte(`{"mcpServers": {"mine": {"url": "https://m.example/mcp"}}}`), 0o600)
	at := time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)
	return &Ops{Home: home, Now: func() time.Time { return at }}, project
}

// A refusal's hints are data: a step the edge words for the command the
// person typed, never a program name spelled into a string.
func TestRefusalHintsAreSteps(t *testing.T) {
	o, project := world(t)
	g, err := o.Gate(project)
	if err != nil {
		t.Fatal(err)
	}
	var oe *Error
	_, err = Server(g, "nosuch")
	if !errors.As(err, &oe) || oe.Kind != Refused || len(oe.Hints) != 1 {
		t.Fatalf("unknown server: %v", err)
	}
	if got := oe.Hints[0].Render("piagent mcp"); got != "run 'piagent mcp list' to see the servers" {
		t.Errorf("hint: %q", got)
	}
	_, err = Server(g, "rep")
	if !errors.As(err, &oe) || oe.Hints[0].Text != "did you mean repo?" {
		t.Errorf("a close name: %v %+v", err, oe)
	}
	_, err = o.Reject(g, "mine")
	if !errors.As(err, &oe) || len(oe.Hints) != 1 || oe.Hints[0].Render("piagent-mcp") != "servers in your global files need no approval; use 'piagent-mcp disable mine' to stop using it" {
		t.Errorf("reject of the person's own server: %v %+v", err, oe)
	}
}

// Approve records what gate's Consent records; reject and reset follow it;
// the switch a person set survives a decision.
func TestDecisions(t *testing.T) {
	o, project := world(t)
	g, _ := o.Gate(project)
	s, err := o.Approvable(g, "repo")
	if err != nil {
		t.Fatal(err)
	}
	if err := SamePreview(s, "sha256:other"); err == nil {
		t.Error("consent to another preview was taken")
	}
	if err := SamePreview(s, s.ApprovalDigest()); err != nil {
		t.Error(err)
	}
	d, err := o.Approve(g, s)
	if err != nil || d.Decision != approval.Approved || d.ApprovalDigest != s.ApprovalDigest() || d.Project != g.Project {
		t.Fatalf("approve: %+v %v", d, err)
	}
	data, _ := approval.Open(d.Store).Load()
	if got, _ := data.Get(g.Project, "repo"); got.Digest != s.Consent(o.now()).Digest {
		t.Errorf("recorded %+v", got)
	}
	// a switch the person set is kept by a decision
	approval.Open(d.Store).Update(func(d *approval.Data) error {
		dec, _ := d.Get(g.Project, "repo")
		dec.Off = true
		d.Set(g.Project, "repo", dec)
		return nil
	})
	if d, err = o.Reject(g, "repo"); err != nil || d.Decision != approval.Rejected {
		t.Fatalf("reject: %+v %v", d, err)
	}
	data, _ = approval.Open(d.Store).Load()
	if got, _ := data.Get(g.Project, "repo"); !got.Off {
		t.Error("rejecting switched the server back on")
	}
	r, err := o.Reset(project, "repo")
	if err != nil || len(r.Dropped) != 1 {
		t.Fatalf("reset: %+v %v", r, err)
	}
	if r, _ = o.Reset(project, "repo"); len(r.Dropped) != 0 {
		t.Errorf("a second reset dropped %v", r.Dropped)
	}
}

// Grant refuses what makes no sense before it reads anything, with the
// usage kind.
func TestGrantUsage(t *testing.T) {
	o, project := world(t)
	for _, opt := range []GrantOptions{
		{Project: project, Server: "repo"},
		{Project: project, Server: "repo", Net: []string{"not a host"}},
		{Project: project, Agent: true, Write: []string{"/x"}},
		{Project: project, Agent: true, Env: []string{"TOKEN"}},
		{Project: project, Server: "repo", Env: []string{"1BAD"}},
	} {
		var oe *Error
		if _, err := o.Grant(opt); !errors.As(err, &oe) || oe.Kind != Usage {
			t.Errorf("%+v: %v", opt, err)
		}
	}
}

func TestWithEnv(t *testing.T) {
	t.Parallel()
	got := WithEnv([]string{"A=1", "PI_MCP_CONFIG_MODE=merge", "PIAGENT_LAUNCHER=0", "B=2", "PI_MCP_CONFIG_MODE=x"},
		map[string]string{"PI_MCP_CONFIG_MODE": "exclusive", "PIAGENT_LAUNCHER": "1", "PIAGENT_LAUNCH_CONFIG": "/c", "PIAGENT_PROJECT": "/p"})
	want := []string{"A=1", "B=2", "PIAGENT_LAUNCHER=1", "PIAGENT_LAUNCH_CONFIG=/c", "PIAGENT_PROJECT=/p", "PI_MCP_CONFIG_MODE=exclusive"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}
