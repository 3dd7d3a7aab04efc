package gate

import (
	"strings"

	"github.com/piagent/piagent/internal/mcpconfig"
)

// Risk is a repository server that is not approved and that pi-mcp-adapter
// could start before any tool call, when Pi runs without the launcher: the
// guard at tool_call cannot stop a connection the adapter opens on its own.
type Risk struct {
	Server string `json:"server"`
	Why    string `json:"why"`
}

// StartupRisk lists the repository servers awaiting a decision or rejected
// that the adapter may start, or load from a source a repository controls,
// outside a tool call (reference pi-mcp-adapter-2.36.md, correction 6 and
// A.6). cacheExists says whether <agentDir>/mcp-cache.json exists. Disabled
// servers and entries the adapter does not load are never at risk.
func StartupRisk(g *Gate, cacheExists bool) []Risk {
	var out []Risk
	for _, s := range g.Servers {
		if !s.Repository || s.Config == nil || !s.Config.AdapterLoads {
			continue
		}
		switch s.State {
		case PendingApproval, ApprovalChanged, Rejected:
		default:
			continue
		}
		var why []string
		if !cacheExists {
			// A.6 "Bootstrap": no cache file, so the first start connects
			// every server to fill it.
			why = append(why, "no metadata cache yet (mcp-cache.json): the adapter's first start connects every server")
		}
		switch lc, _ := s.Config.Entry["lifecycle"].(string); lc {
		case "eager", "keep-alive":
			// A.6 "Lifecycle": eager and keep-alive connect when the
			// extension loads and again at session start.
			why = append(why, "lifecycle "+lc+" connects when the adapter loads")
		}
		if s.DirectTools && cacheExists {
			// init.ts direct-tools bootstrap: a server with direct tools and
			// no valid cache entry is connected at startup to list them.
			why = append(why, "direct tools are connected at startup when their cached metadata is missing or stale")
		}
		switch s.Config.Layer {
		case mcpconfig.LayerHost:
			// Correction 4 and A.2 "Host-config discovery".
			why = append(why, "it arrives through host-config discovery, outside the files a person reviews")
		case mcpconfig.LayerPackage:
			// Correction 4: the adapter reads .pi/settings.json itself.
			why = append(why, "it arrives through a Pi package the adapter loads itself")
		case mcpconfig.LayerAgentPlugin, mcpconfig.LayerClaudePlugin:
			// Correction 4: agentPluginPaths and claudePlugins.
			why = append(why, "it arrives through a plugin the adapter loads itself")
		}
		if len(why) == 0 {
			continue
		}
		out = append(out, Risk{Server: s.Name, Why: strings.Join(why, "; ")})
	}
	return out
}

// RiskNotice is the session-notice form of StartupRisk: one line per server
// and one that names the fix. It is empty when nothing is at risk.
func RiskNotice(risks []Risk) []string {
	if len(risks) == 0 {
		return nil
	}
	out := make([]string, 0, len(risks)+1)
	for _, r := range risks {
		out = append(out, "piagent: without the launcher the adapter may start unapproved MCP server "+r.Server+" before any tool call: "+r.Why)
	}
	return append(out, "piagent: start Pi with 'piagent pi' so that the adapter only sees approved servers")
}
