package imports

// readClaudeDesktop reads the macOS Claude Desktop file, at the same path under
// home on every OS as the adapter does, `mcpServers` only.
func (r *reader) readClaudeDesktop() {
	p := r.homePath("Library", "Application Support", "Claude", "claude_desktop_config.json")
	if i, doc := r.first(p); i >= 0 {
		r.addServers(objectEntries(serverMap(doc, "mcpServers")), i, true)
	}
}
