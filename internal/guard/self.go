package guard

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/shell"
)

// self applies the gate's protection of itself: consent is a person's act,
// so no tool call may record or change a decision, or write a file that
// decides what runs. It reports stop=true with the decision when the call is
// stopped.
func (s *Snapshot) self(c Call) (Decision, bool) {
	switch c.ToolName {
	case "read", "grep", "find", "ls":
		return Decision{}, false // reading the gate's state is fine
	case "bash":
		cmd, _ := c.Input["command"].(string)
		return s.selfShell(cmd)
	case "write", "edit":
		p, _ := c.Input["path"].(string)
		if f, hit := s.isProtected(p); hit {
			return selfBlock(fmt.Sprintf("%s would write %s", c.ToolName, f)), true
		}
		return Decision{}, false
	}
	// Any other tool (custom or MCP): a string argument naming a guarded
	// file could be a write.
	if f, hit := s.protectedIn(c.Input, 0); hit {
		return selfBlock(fmt.Sprintf("%s names %s", c.ToolName, f)), true
	}
	if cmd, ok := c.Input["command"].(string); ok && strings.Contains(cmd, "piagent") {
		return s.selfShell(cmd)
	}
	return Decision{}, false
}

func selfBlock(what string) Decision {
	return Decision{Action: Block, Code: CodeSelf,
		Reason: "piagent: blocked: " + what + "; approvals and MCP configuration are a person's decision, so an agent's tool call cannot make them; run the command yourself in a terminal, or use /piagent-mcp in Pi"}
}

// protectedIn walks an input for string values naming a guarded file.
func (s *Snapshot) protectedIn(v any, depth int) (string, bool) {
	if depth > 32 {
		return "input nested too deeply to inspect", true
	}
	switch x := v.(type) {
	case string:
		if len(x) < 4096 && !strings.ContainsAny(x, "\n") {
			return s.isProtected(x)
		}
	case map[string]any:
		for _, e := range x {
			if f, hit := s.protectedIn(e, depth+1); hit {
				return f, true
			}
		}
	case []any:
		for _, e := range x {
			if f, hit := s.protectedIn(e, depth+1); hit {
				return f, true
			}
		}
	}
	return "", false
}

// selfShell parses a shell command and stops it when it runs a piagent
// subcommand that changes decisions or configuration, or writes a guarded
// file. A command that cannot be parsed is stopped: what it runs is unknown.
func (s *Snapshot) selfShell(cmd string) (Decision, bool) {
	if cmd == "" {
		return Decision{}, false
	}
	a, err := shell.Parse(cmd)
	if err != nil {
		return Decision{Action: Block, Code: CodeShellParse,
			Reason: "piagent: blocked: the shell command cannot be parsed (" + err.Error() + "), so what it runs cannot be checked"}, true
	}
	for _, f := range shell.GateSelf(a, shell.Context{Home: s.home, Cwd: s.cwd, ProjectRoot: s.cwd}) {
		return selfBlock(fmt.Sprintf("the command runs %s", f.Command)), true
	}
	for _, w := range shell.Writes(a) {
		if w.Dynamic {
			if suspicious(w.Lit) {
				return selfBlock(fmt.Sprintf("the command writes %s, which cannot be resolved before it runs", w.Lit)), true
			}
			if f, hit := s.holdsProtected(literalDir(w.Lit)); hit {
				return selfBlock(fmt.Sprintf("the command writes %s, which can reach %s", w.Lit, f)), true
			}
			continue
		}
		if f, hit := s.isProtected(w.Lit); hit {
			return selfBlock("the command writes " + f), true
		}
	}
	for _, w := range shell.Trees(a) {
		lit := w.Lit
		if w.Dynamic {
			lit = literalDir(lit)
		}
		if f, hit := s.holdsProtected(lit); hit {
			return selfBlock(fmt.Sprintf("the command %s replaces, moves or removes %s, which holds %s", quoteCmd(cmd), w.Lit, f)), true
		}
	}
	for _, w := range shell.Links(a) {
		if w.Dynamic {
			continue
		}
		if f, hit := s.isProtected(w.Lit); hit {
			return selfBlock("the command links to " + f + ", so a later write could reach it under another name"), true
		}
	}
	return Decision{}, false
}

// quoteCmd shows a command in a reason, shortened.
func quoteCmd(cmd string) string {
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	return "`" + cmd + "`"
}

// literalDir is the folder part of a dynamic word before its first
// expansion or glob ("" when the word starts with one).
func literalDir(lit string) string {
	if i := strings.IndexAny(lit, "*?[{$`("); i >= 0 {
		lit = lit[:i]
	}
	if i := strings.LastIndexByte(lit, '/'); i >= 0 {
		return lit[:i+1]
	}
	return ""
}

// suspicious reports whether a write target that cannot be resolved could be
// one of the gate's files.
func suspicious(lit string) bool {
	l := strings.ToLower(lit)
	for _, frag := range []string{"mcp", "piagent", "settings.json", ".pi/", ".pi\\", "opencode", ".vscode", ".cursor", ".codex", ".claude", "windsurf", ".codeium", ".agents", "$home", "~"} {
		if strings.Contains(l, frag) {
			return true
		}
	}
	return false
}
