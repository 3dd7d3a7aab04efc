package ops

import (
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
)

// The configuration's own words, as list and doctor show them.
type (
	// Source is where a server's winning definition comes from.
	Source = mcpconfig.Source
	// Skipped is a configuration file that exists but was not used.
	Skipped = mcpconfig.Skipped
)

const (
	// TargetUnreadable is an import's target that exists but cannot be
	// read or parsed.
	TargetUnreadable = mcpconfig.TargetUnreadable
	// BuiltinProvenance names Pi's built-in MCP client's servers.
	BuiltinProvenance = mcpconfig.BuiltinProvenance
)

// ExclusiveFile is the one file the adapter reads under
// PI_MCP_CONFIG_MODE=exclusive: Pi's global mcp.json (or --mcp-config).
func ExclusiveFile(g *gate.Gate) string {
	for _, l := range g.View.Layers {
		if l.ID == mcpconfig.LayerPiGlobal {
			return l.Path
		}
	}
	return ""
}
