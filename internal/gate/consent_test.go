package gate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
)

// TestConsent: what Consent records is what the gate reads as approved (the
// server is ready, and approval-changed after an edit, with the person's
// definition kept for the diff, its secret masked); Refusal reads as
// rejected; a pinned file that is missing is not recorded as a digest.
func TestConsent(t *testing.T) {
	t.Parallel()
	opts := approvedProject(t)
	if s := stateOf(t, opts); s.State != Ready {
		t.Fatalf("after Consent: %s (%s), want ready", s.State, s.Reason)
	}
	mcp := filepath.Join(opts.Cwd, ".mcp.json")
	const withSecret = `{"mcpServers":{"s":{"command":"node","args":["a.js","b.js","c.js"],"env":{"TOKEN":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}}}`
	if err := os.WriteFile(mcp, []byte(withSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := g.Server("s")
	if s.State != ApprovalChanged {
		t.Fatalf("after an edit: %s, want approval-changed", s.State)
	}
	at := time.Date(2026, 12, 6, 1, 2, 3, 0, time.FixedZone("x", 3600))
	dec := s.Consent(at)
	if dec.Decision != approval.Approved || dec.Digest != s.Digest || dec.DecidedAt != "2026-12-06T00:02:03Z" {
		t.Errorf("Consent = %+v", dec)
	}
	if len(dec.Files) != 2 || dec.Files["c.js"] != "" {
		t.Errorf("a missing pinned file is recorded, or a file is not: %v", dec.Files)
	}
	if strings.Contains(string(dec.Definition), "ghp_") || !strings.Contains(string(dec.Definition), `"c.js"`) {
		t.Errorf("the definition kept is not the masked fragment: %s", dec.Definition)
	}
	var kept any
	if err := json.Unmarshal(dec.Definition, &kept); err != nil {
		t.Fatal(err)
	}
	store := approval.Open(filepath.Join(opts.Home, ".pi", "piagent-mcp-approvals.json"))
	record := func(d approval.Decision) {
		t.Helper()
		if err := store.Update(func(data *approval.Data) error { data.Set(g.Project, "s", d); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	record(dec)
	if s := stateOf(t, opts); s.State != Ready {
		t.Errorf("after consent to the edit: %s (%s), want ready", s.State, s.Reason)
	}
	record(s.Refusal(at))
	if s := stateOf(t, opts); s.State != Rejected {
		t.Errorf("after Refusal: %s, want rejected", s.State)
	}
}
