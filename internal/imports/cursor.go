package imports

// readCursor reads ~/.cursor/mcp.json, `mcpServers` else `mcp-servers`,
// entries passed through as written.
func (r *reader) readCursor() {
	if i, doc := r.first(r.homePath(".cursor", "mcp.json")); i >= 0 {
		r.addServers(objectEntries(serverMap(doc, "mcpServers", "mcp-servers")), i, true)
	}
}
