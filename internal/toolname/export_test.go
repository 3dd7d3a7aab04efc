package toolname

import "strings"

// Helpers only the tests use.

// Escape is the adapter's prefix escaping: every character outside
// [A-Za-z0-9_-] becomes _<lower-case hex code point>_, so "a.b c" gives
// "a_2e_b_20_c". Invalid UTF-8 bytes count as U+FFFD.
func Escape(server string) string { return escape(server, false) }

// CandidateNames lists, in the adapter's order and without repeats, every
// name under which the mcp proxy accepts the MCP tool tool of server when
// mode is the server's effective mode (getToolNameCandidates with legacy
// forms): the original name, the name under mode, "server", "short" and
// "mcp", then the same for the tool name with hyphens turned into '_', the
// legacy forms (every character of the server name outside [A-Za-z0-9]
// escaped) and the current forms
// with every hyphen turned into '_'.
func CandidateNames(server, mode, tool string) []string {
	out := make([]string, 0, 18)
	seen := make(map[string]bool, 18)
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	modes := [...]string{mode, ModeServer, ModeShort, ModeMCP}
	add(tool)
	for _, m := range modes {
		add(ToolName(Prefix(server, m), tool))
	}
	legacy := strings.ReplaceAll(tool, "-", "_")
	add(legacy)
	for _, m := range modes {
		add(ToolName(Prefix(server, m), legacy))
	}
	for _, m := range modes {
		add(legacyToolName(tool, server, m))
	}
	for _, m := range modes {
		add(strings.ReplaceAll(ToolName(Prefix(server, m), tool), "-", "_"))
	}
	return out
}

// legacyToolName is formatLegacyToolName: legacy prefix, and '.' and '-' in
// the tool name turned into '_'.
func legacyToolName(tool, server, mode string) string {
	p := prefix(server, mode, true)
	t := strings.NewReplacer(".", "_", "-", "_").Replace(tool)
	if p == "" {
		return t
	}
	return p + "_" + t
}
