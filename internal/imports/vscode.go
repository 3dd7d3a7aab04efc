package imports

// readVSCode reads <cwd>/.vscode/mcp.json: `mcpServers` else `mcp-servers` as
// the adapter does, and, for the union rule, VS Code's real key `servers`,
// whose entries the adapter never loads.
func (r *reader) readVSCode() {
	i, doc := r.first(r.cwdPath(".vscode", "mcp.json"))
	if i < 0 {
		return
	}
	r.addServers(objectEntries(serverMap(doc, "mcpServers", "mcp-servers")), i, true)
	entries := objectEntries(serverMap(doc, "servers"))
	for name, e := range entries {
		entries[name] = vscodeEntry(e)
	}
	r.addServers(entries, i, false)
}

// vscodeEntry translates a VS Code server into the adapter's shape. VS Code
// already names the fields command/args/env and url/headers; only `type`
// differs: it is dropped, and "sse" becomes httpTransport "sse" (the
// adapter's field for a fixed HTTP transport).
func vscodeEntry(e map[string]any) map[string]any {
	t, ok := e["type"]
	if !ok {
		return e
	}
	m := shallowCopy(e)
	delete(m, "type")
	if _, has := m["httpTransport"]; t == "sse" && !has {
		m["httpTransport"] = "sse"
	}
	return m
}
