package imports

// readClaudeCode reads ~/.claude/mcp.json, ~/.claude.json and
// ~/.claude/claude_desktop_config.json in that order, top-level `mcpServers`
// only, as the adapter does. For the union rule it also reads the entries
// Claude Code keeps per project in ~/.claude.json
// (`projects[<cwd>].mcpServers`, the cwd as given or its real path), which the
// adapter never loads, whichever candidate it stopped at.
func (r *reader) readClaudeCode() {
	claudeJSON := r.homePath(".claude.json")
	i, doc := r.first(r.homePath(".claude", "mcp.json"), claudeJSON, r.homePath(".claude", "claude_desktop_config.json"))
	if i >= 0 {
		r.addServers(objectEntries(serverMap(doc, "mcpServers")), i, true)
	}

	// Find ~/.claude.json's candidate and its document.
	j := -1
	for k, c := range r.res.Candidates {
		if c.Path == claudeJSON {
			j = k
		}
	}
	var nested any
	switch c := &r.res.Candidates[j]; c.Status {
	case StatusLoaded:
		nested = doc
	case StatusShadowed:
		// The adapter never parses it, but Claude Code does: parse it for the
		// union and report a failure on the shadowed candidate.
		probe := Candidate{}
		v, ok := r.parseInto(&probe, claudeJSON)
		if !ok {
			c.Line, c.Column, c.Err = probe.Line, probe.Column, probe.Err
			return
		}
		nested = v
	default:
		return
	}
	projects := serverMap(nested, "projects")
	keys := []string{r.cwd}
	if r.cwdReal != r.cwd {
		keys = append(keys, r.cwdReal)
	}
	for _, key := range keys {
		r.addServers(objectEntries(serverMap(projects[key], "mcpServers")), j, false)
	}
}
