package guard

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/catalogue"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/toolname"
)

// builtins are Pi's own tools; they are never MCP tools.
var builtins = map[string]bool{"read": true, "bash": true, "edit": true, "write": true, "grep": true, "find": true, "ls": true}

// DecideFacts answers one tool call: the full-block states, the gate's
// protection of itself, MCP approval for every tool surface, then the tool
// policy. The first that stops the call answers.
func (s *Snapshot) DecideFacts(c Call, f policy.Facts) Decision {
	if s.g.FullBlock() {
		return s.fullBlock()
	}
	// One inspection of the call: its input walked once, its command
	// parsed once, read by the self-protection and the tool policy alike.
	in := policy.Inspect(policy.Call{ToolName: c.ToolName, Input: c.Input})
	// Self lets read-only tools pass too; asked here first, they skip the
	// call (15 ns of the 35 a read's decision costs).
	if !policy.ReadOnlyTool(c.ToolName) {
		if d, stop := s.self(&in); stop {
			return d
		}
	}
	d := s.mcp(c)
	if d.Action != Allow || s.opts.Policy == nil {
		return d
	}
	pd := s.opts.Policy.DecideInspection(&in, f)
	if pd.Action == policy.ActionAllow {
		return d
	}
	return Decision{Action: pd.Action, Code: pd.Code, Reason: pd.Reason, Rule: pd.Rule, Subject: pd.Subject}
}

// mcp decides the MCP side of a call: which server it reaches, and whether
// that server may be used.
func (s *Snapshot) mcp(c Call) Decision {
	if builtins[c.ToolName] {
		return allow // Pi's own tools: the common case, decided first
	}
	switch {
	case c.ToolName == "mcp":
		return s.proxy(c.Input)
	case c.ToolName == "mcpScript":
		return s.mcpScript()
	case strings.HasPrefix(c.ToolName, "mcp__"):
		if owner, ok := toolname.OwnerOfNamespace(c.ToolName, s.names); ok {
			tool, _ := c.Input["tool"].(string)
			return s.serverTool(owner, tool, "namespace proxy "+c.ToolName)
		}
		return s.builtinTool(c.ToolName)
	case builtinResourceTools[c.ToolName]:
		if name, _ := c.Input["server"].(string); name != "" {
			return s.server(name, c.ToolName)
		}
		return s.everyServer(c.ToolName)
	}
	if builtins[c.ToolName] {
		return allow
	}
	if s.direct {
		if d, found := s.directTool(c.ToolName); found {
			return d
		}
	}
	if s.opts.AdapterPath != "" && c.SourcePath == s.opts.AdapterPath {
		return Decision{Action: Block, Code: CodeUnknownMCP,
			Reason: fmt.Sprintf("%s is an MCP tool whose server cannot be told from its name, so its approval cannot be checked; run 'piagent-mcp doctor' in a terminal", c.ToolName)}
	}
	return allow
}

// builtinResourceTools are Pi's built-in MCP client's resource tools: they
// take a server argument, and without one reach every connected server.
var builtinResourceTools = map[string]bool{
	"list_mcp_resources":          true,
	"list_mcp_resource_templates": true,
	"read_mcp_resource":           true,
}

// builtinTool decides an mcp__ name that is no adapter namespace proxy: a
// tool of Pi's built-in MCP client (direct, or called from a codemode
// script). Every server the name could belong to must be usable; a name
// that belongs to no server piagent knows fails closed, since its server
// cannot be checked.
func (s *Snapshot) builtinTool(name string) Decision {
	owners := toolname.OwnersOfBuiltin(name, s.names)
	if len(owners) == 0 {
		return Decision{Action: Block, Code: CodeUnknownMCP,
			Reason: fmt.Sprintf("%s looks like an MCP tool of Pi's built-in client, but it names no server piagent knows, so its approval cannot be checked; run 'piagent-mcp doctor' in a terminal", name)}
	}
	return s.anyOwner(owners, name, "tool "+name, fmt.Sprintf("servers whose tools Pi could name %s", name))
}

// anyOwner decides a call that any of owners could serve: each must let
// called through (its state, then its catalogue); the first that does not
// answers, naming the others when there are several.
func (s *Snapshot) anyOwner(owners []string, called, via, several string) Decision {
	for _, o := range owners {
		if d := s.serverTool(o, called, via); d.Action != Allow {
			if len(owners) > 1 {
				d.Reason += fmt.Sprintf(" (%s: %s)", several, strings.Join(owners, ", "))
			}
			return d
		}
	}
	return allow
}

// everyServer decides a call that reaches every connected server.
func (s *Snapshot) everyServer(via string) Decision {
	for _, o := range s.names {
		if srv := s.byName[o]; srv != nil && gate.Blocks(srv.State) {
			d := blockFor(srv, via+" (it reaches every server; name an approved one with server)")
			return d
		}
	}
	return allow
}

func (s *Snapshot) fullBlock() Decision {
	var parts []string
	var fix *gate.Fix
	for i, b := range s.g.Blocks {
		parts = append(parts, b.Reason+" (files: "+strings.Join(b.Files, ", ")+")")
		if fix == nil && !b.Fix.IsZero() {
			fix = &s.g.Blocks[i].Fix
		}
	}
	words := ""
	if fix != nil {
		words = fix.String()
	}
	return Decision{Action: Block, Code: CodeFullBlock, Fix: fix,
		Reason: "every tool call is blocked: " + strings.Join(parts, "; ") + "; " + words + ", then check with 'piagent-mcp doctor' in a terminal"}
}

// server decides a call that reaches one named server.
func (s *Snapshot) server(name, via string) Decision { return s.serverTool(name, "", via) }

// serverTool decides a call of one tool (called: the name as the call gives
// it, "" when it names none) of a named server: the gate's state, then the
// server's catalogue against its pin.
func (s *Snapshot) serverTool(name, called, via string) Decision {
	srv, ok := s.byName[name]
	if !ok {
		// The adapter answers server_not_found and starts nothing.
		return allow
	}
	if gate.Blocks(srv.State) {
		return blockFor(srv, via)
	}
	st := s.opts.Catalogues[name]
	if st == nil {
		return allow
	}
	tool := s.originalTool(srv, st, called)
	state, why, stop := st.Stops(tool)
	if !stop {
		return allow
	}
	fix := gate.AcceptTools(name)
	return Decision{Action: Block, Code: CodeCatalogue, Server: name, State: state, Fix: &fix,
		Reason: fmt.Sprintf("MCP server %s is %s: %s, so %s is blocked; a person can review it with 'piagent-mcp get %s' and accept it with '%s' in a terminal", name, state, why, via, name, fix)}
}

// originalTool is the server's own name of the tool a call names: as is,
// with the adapter's prefix, or as Pi's built-in client names it. "" when
// the call names no tool of the seen catalogue.
func (s *Snapshot) originalTool(srv *gate.Server, st *catalogue.State, called string) string {
	if called == "" {
		return ""
	}
	if _, ok := st.Seen.Tools[called]; ok {
		return called // the proxy's usual form: the server's own name
	}
	prefix := toolname.Prefix(srv.Name, srv.Prefix)
	builtin := strings.HasPrefix(called, "mcp__")
	for t := range st.Seen.Tools {
		if toolname.ToolName(prefix, t) == called || builtin && toolname.BuiltinToolName(srv.Name, t) == called {
			return t
		}
	}
	return ""
}

// fixOf is the server's fix, nil when it has none.
func fixOf(srv *gate.Server) *gate.Fix {
	if srv.Fix.IsZero() {
		return nil
	}
	return &srv.Fix
}

func blockFor(srv *gate.Server, via string) Decision {
	how := ""
	if !srv.Fix.IsZero() {
		// Each command in its own quotes: "'get x', then 'approve x'",
		// never two commands quoted as one.
		q := srv.Fix
		q.Quoted = true
		how = "; a person can run " + q.String() + " in a terminal, or use /piagent-mcp in Pi"
	}
	return Decision{Action: Block, Code: CodeServer, Server: srv.Name, State: srv.State, Fix: fixOf(srv),
		Reason: fmt.Sprintf("MCP server %s is %s (%s), so %s is blocked%s", srv.Name, srv.State, srv.Reason, via, how)}
}

// proxy decides a call of the mcp proxy tool, mode by mode in the adapter's
// order: action, tool, connect, describe, instructions, search, server, status.
func (s *Snapshot) proxy(in map[string]any) Decision {
	str := func(k string) string { v, _ := in[k].(string); return v }
	server := str("server")
	switch str("action") {
	case "install":
		name := server
		if name == "" {
			name = "NAME"
		}
		url := str("url")
		if url == "" {
			url = "URL"
		}
		fix := gate.Fix{Steps: []gate.Step{{Sub: "add", Args: name + " --url " + url}}}
		return Decision{Action: Block, Code: CodeInstall, Server: server, Fix: &fix,
			Reason: "mcp install is blocked: a tool call must not add a server to your configuration; a person can run '" + fix.String() + "' in a terminal"}
	case "auth-start", "auth-complete":
		if server != "" {
			return s.server(server, "signing in to it")
		}
		return allow
	}
	if server != "" {
		return s.serverTool(server, str("tool"), "the mcp call")
	}
	if tool := str("tool"); tool != "" {
		return s.unnamed(tool)
	}
	if c := str("connect"); c != "" {
		return s.server(c, "connecting to it")
	}
	if i := str("instructions"); i != "" {
		return s.server(i, "reading its instructions")
	}
	// describe, search and status name no server and start nothing.
	return allow
}

// unnamed decides {tool} without a server: every server that could serve the
// name must be usable.
func (s *Snapshot) unnamed(tool string) Decision {
	owners := toolname.CouldServe(tool, s.reverse)
	return s.anyOwner(owners, tool, "the mcp call for "+tool, fmt.Sprintf("servers that could serve %s; name one with server", tool))
}

// directTool decides a tool name that some server's direct tools could own.
func (s *Snapshot) directTool(name string) (Decision, bool) {
	owners := toolname.OwnersOfDirect(name, s.reverse)
	switch len(owners) {
	case 0:
		return Decision{}, false
	case 1:
		return s.serverTool(owners[0], name, "direct tool "+name), true
	}
	for _, o := range owners {
		if srv := s.byName[o]; srv != nil && gate.Blocks(srv.State) {
			q := srv.Fix
			q.Quoted = true // each command in its own quotes
			return Decision{Action: Block, Code: CodeAmbiguous, Server: o, State: srv.State, Fix: fixOf(srv),
				Reason: fmt.Sprintf("direct tool %s could belong to %s, and %s is %s; set toolPrefix to \"server\" or approve it with %s in a terminal",
					name, strings.Join(owners, " or "), o, srv.State, q)}, true
		}
	}
	return allow, true
}

func (s *Snapshot) mcpScript() Decision {
	if s.script == nil {
		return allow
	}
	d := blockFor(s.script, "mcpScript (its server cannot be known before it runs)")
	d.Code = CodeScript
	return d
}

// MCPTool reports whether a tool's results come from an MCP server: the
// adapter's proxy, namespace proxies and direct tools, and Pi's built-in
// client's tools.
func (s *Snapshot) MCPTool(name string) bool {
	switch {
	case name == "mcp", name == "mcpScript", strings.HasPrefix(name, "mcp__"), builtinResourceTools[name]:
		return true
	}
	return s.direct && len(toolname.OwnersOfDirect(name, s.reverse)) > 0
}

// Catalogue is the named server's catalogue against its pin; nil when it
// has none.
func (s *Snapshot) Catalogue(name string) *catalogue.State { return s.opts.Catalogues[name] }

// ChangedTool is a tool blocked by its server's catalogue state, in every
// name the model may see it under.
type ChangedTool struct {
	Server string
	Tool   string
	Names  []string // the server's own name, the adapter's prefixed name, the built-in's
}

// ChangedTools lists the tools whose calls the catalogue states stop.
func (s *Snapshot) ChangedTools() []ChangedTool {
	var out []ChangedTool
	for name, st := range s.opts.Catalogues {
		srv := s.byName[name]
		if srv == nil {
			continue
		}
		prefix := toolname.Prefix(srv.Name, srv.Prefix)
		for t := range st.Seen.Tools {
			if _, _, stop := st.Stops(t); stop {
				out = append(out, ChangedTool{Server: name, Tool: t,
					Names: []string{t, toolname.ToolName(prefix, t), toolname.BuiltinToolName(name, t)}})
			}
		}
	}
	return out
}

// Withholds says whether the model must not be shown the declaration of
// tool name (sourcePath: where Pi says the tool comes from): a tool a server
// supplies (an adapter direct tool or namespace proxy, a tool of Pi's
// built-in MCP client) whose call the MCP gate stops, because its server is
// not approved or its catalogue changed, is new or hides content. Its
// description is the server's words, which no person has accepted (issue
// 39, item 1). The decision says why. Pi's own tools, the adapter's mcp
// proxy and mcpScript, and the built-in's resource tools describe nothing
// of a server and are never withheld; their calls are decided as ever.
func (s *Snapshot) Withholds(name, sourcePath string) (Decision, bool) {
	switch {
	case builtins[name], name == "mcp", name == "mcpScript", builtinResourceTools[name]:
		return allow, false
	case strings.HasPrefix(name, "mcp__"):
	case s.direct && len(toolname.OwnersOfDirect(name, s.reverse)) > 0:
	case s.opts.AdapterPath != "" && sourcePath == s.opts.AdapterPath:
	default:
		return allow, false
	}
	if s.g.FullBlock() {
		// every call is blocked, and which server owns the name is not
		// decided past the full block: withheld, the safe side
		return s.fullBlock(), true
	}
	d := s.mcp(Call{ToolName: name, Input: map[string]any{}, SourcePath: sourcePath})
	return d, d.Action == Block
}
