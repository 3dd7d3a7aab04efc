package mcpconfig

import "strings"

// FatalReason starts the Reason of a Skipped entry whose problem makes the
// adapter's own config loading throw (a broken Pi settings.json or package
// manifest, an imports entry such as "constructor", an invalid settings
// block in a Claude plugin's .mcp.json). The adapter then loads no MCP
// configuration at all; the rest of the View still shows what is configured.
const FatalReason = "the adapter fails to load any mcp config: "

// AdapterFails lists the Skipped entries that stop the adapter from loading
// any configuration (see FatalReason).
func (v *View) AdapterFails() []Skipped {
	var out []Skipped
	for _, s := range v.Skipped {
		if strings.HasPrefix(s.Reason, FatalReason) {
			out = append(out, s)
		}
	}
	return out
}
