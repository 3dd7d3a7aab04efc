package gate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/piagent/piagent/internal/mcpconfig"
)

func TestStartupRisk(t *testing.T) {
	t.Parallel()
	srv := func(name, state string, repo bool, layer string, entry mcpconfig.Entry) Server {
		return Server{Name: name, State: state, Repository: repo,
			Config: &mcpconfig.Server{Name: name, Entry: entry, Layer: layer, AdapterLoads: true, RepositoryControlled: repo}}
	}
	lazy := mcpconfig.Entry{"command": "x"}
	eager := mcpconfig.Entry{"command": "x", "lifecycle": "eager"}
	keep := mcpconfig.Entry{"command": "x", "lifecycle": "keep-alive"}
	lazyKeep := mcpconfig.Entry{"command": "x", "lifecycle": "lazy-keep-alive"}
	cases := []struct {
		name    string
		servers []Server
		cache   bool
		want    []string // "server: first words of why"
	}{
		{"nothing configured", nil, false, nil},
		{"user servers never count", []Server{srv("mine", Ready, false, mcpconfig.LayerPiGlobal, eager)}, false, nil},
		{"approved repository server", []Server{srv("ok", Ready, true, mcpconfig.LayerSharedProject, eager)}, false, nil},
		{"disabled", []Server{srv("off", Disabled, true, mcpconfig.LayerSharedProject, eager)}, false, nil},
		{"no cache: bootstrap", []Server{srv("repo", PendingApproval, true, mcpconfig.LayerSharedProject, lazy)}, false,
			[]string{"repo: no metadata cache"}},
		{"cache, lazy: safe", []Server{srv("repo", PendingApproval, true, mcpconfig.LayerSharedProject, lazy)}, true, nil},
		{"lazy-keep-alive waits for a call", []Server{srv("repo", PendingApproval, true, mcpconfig.LayerSharedProject, lazyKeep)}, true, nil},
		{"eager", []Server{srv("repo", ApprovalChanged, true, mcpconfig.LayerPiProject, eager)}, true,
			[]string{"repo: lifecycle eager"}},
		{"keep-alive, rejected", []Server{srv("repo", Rejected, true, mcpconfig.LayerSharedProject, keep)}, true,
			[]string{"repo: lifecycle keep-alive"}},
		{"no cache and eager", []Server{srv("repo", PendingApproval, true, mcpconfig.LayerSharedProject, eager)}, false,
			[]string{"repo: no metadata cache", "repo: lifecycle eager"}},
		{"host discovery", []Server{srv("vs", PendingApproval, true, mcpconfig.LayerHost, lazy)}, true,
			[]string{"vs: it arrives through host-config discovery"}},
		{"package", []Server{srv("p__s", PendingApproval, true, mcpconfig.LayerPackage, lazy)}, true,
			[]string{"p__s: it arrives through a Pi package"}},
		{"plugins", []Server{srv("a__s", PendingApproval, true, mcpconfig.LayerAgentPlugin, lazy), srv("c", PendingApproval, true, mcpconfig.LayerClaudePlugin, lazy)}, true,
			[]string{"a__s: it arrives through a plugin", "c: it arrives through a plugin"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, r := range StartupRisk(&Gate{Servers: tc.servers}, tc.cache) {
				for _, w := range strings.Split(r.Why, "; ") {
					got = append(got, r.Server+": "+w)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("risks %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("risk %d = %q, want it to start %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// Direct tools are listed only once a cache exists (without one the
// bootstrap reason already covers them).
func TestStartupRiskDirectTools(t *testing.T) {
	t.Parallel()
	s := Server{Name: "d", State: PendingApproval, Repository: true, DirectTools: true,
		Config: &mcpconfig.Server{Name: "d", Entry: mcpconfig.Entry{"command": "x"}, AdapterLoads: true}}
	got := StartupRisk(&Gate{Servers: []Server{s}}, true)
	if len(got) != 1 || !strings.Contains(got[0].Why, "direct tools") {
		t.Errorf("risks %+v, want the direct-tools reason", got)
	}
	got = StartupRisk(&Gate{Servers: []Server{s}}, false)
	if len(got) != 1 || strings.Contains(got[0].Why, "direct tools") {
		t.Errorf("risks %+v, want only the bootstrap reason", got)
	}
}

func TestRiskNotice(t *testing.T) {
	t.Parallel()
	if got := RiskNotice(nil); got != nil {
		t.Errorf("no risks: %q", got)
	}
	got := RiskNotice([]Risk{{Server: "repo", Why: "lifecycle eager connects when the adapter loads"}})
	want := []string{
		"piagent: without the launcher the adapter may start unapproved MCP server repo before any tool call: lifecycle eager connects when the adapter loads",
		"piagent: start Pi with 'piagent pi' so that the adapter only sees approved servers",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notice (-want +got):\n%s", diff)
	}
}
