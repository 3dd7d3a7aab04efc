package imports

// readWindsurf reads ~/.windsurf/mcp.json (`mcpServers` else `mcp-servers`)
// as the adapter does, and, for the union rule, Windsurf's real file
// ~/.codeium/windsurf/mcp_config.json (`mcpServers`), whose entries the
// adapter never loads.
func (r *reader) readWindsurf() {
	if i, doc := r.first(r.homePath(".windsurf", "mcp.json")); i >= 0 {
		r.addServers(objectEntries(serverMap(doc, "mcpServers", "mcp-servers")), i, true)
	}
	i, doc, ok := r.read(r.homePath(".codeium", "windsurf", "mcp_config.json"), false)
	if !ok {
		return
	}
	entries := objectEntries(serverMap(doc, "mcpServers"))
	for name, e := range entries {
		entries[name] = windsurfEntry(e)
	}
	r.addServers(entries, i, false)
}

// windsurfEntry gives a remote server's `serverUrl` as `url`, the adapter's
// name for it, unless the entry already sets url.
func windsurfEntry(e map[string]any) map[string]any {
	u, ok := e["serverUrl"]
	if _, has := e["url"]; !ok || has {
		return e
	}
	m := shallowCopy(e)
	delete(m, "serverUrl")
	m["url"] = u
	return m
}
