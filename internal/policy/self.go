package policy

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/imports"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/shell"
)

// Reason codes of the gate's protection of itself.
const (
	CodeSelf = "gate-self" // the call would record a decision or write a file that decides what runs
	// CodeSelfParse: the command cannot be parsed, so what it runs is
	// unknown (the self-protection's code; the policy's is CodeShellParse).
	CodeSelfParse = "shell-parse"
)

// Guarded is what the gate's protection of itself checks a call against:
// the registry of files that decide what runs, and how a tool's path
// resolves.
type Guarded struct {
	Reg       *registry.Set
	Home, Cwd string
	// Resolve returns the real path of p (symlinks followed, the longest
	// existing prefix resolved, a dangling link past it followed to where
	// a write would create its target); nil leaves paths as written.
	Resolve func(p string) string
}

// Self applies the gate's protection of itself, the first layer of every
// decision: consent is a person's act, so no tool call may record or change
// a decision, or write a file that decides what runs. stop is true when the
// call is stopped. It needs no loaded policy: it holds with none.
func (in *Inspection) Self(g *Guarded) (d Decision, stop bool) {
	c := in.Call
	if ReadOnlyTool(c.ToolName) {
		return Decision{}, false // reading the gate's state is fine
	}
	switch c.ToolName {
	case "bash":
		cmd, _ := in.command()
		return in.selfShell(g, cmd)
	case "write", "edit":
		p, _ := c.Input["path"].(string)
		if f, hit := g.isProtected(p); hit {
			return selfBlock(fmt.Sprintf("%s would write %s", c.ToolName, f)), true
		}
		return Decision{}, false
	}
	// Any other tool (custom or MCP): a string naming a guarded file could
	// be a write. The walk is the one the policy reads after.
	x := in.extraction()
	for _, list := range [...][]candidate{x.cands, x.search, x.commands} {
		for _, s := range list {
			if s.kind == candKey || !pathLike(s.value) {
				continue
			}
			if f, hit := g.isProtected(s.value); hit {
				return selfBlock(fmt.Sprintf("%s names %s", c.ToolName, f)), true
			}
		}
	}
	if x.tooDeep != "" {
		return selfBlock(fmt.Sprintf("%s names input nested too deeply to inspect", c.ToolName)), true
	}
	// A command the tool carries is read as shell, as the policy reads it
	// (the same parse): what it runs and writes.
	for _, c := range x.commands {
		if d, stop := in.selfShell(g, c.value); stop {
			return d, true
		}
	}
	return Decision{}, false
}

func selfBlock(what string) Decision {
	return Decision{Action: ActionBlock, Code: CodeSelf,
		Reason: "blocked: " + what + "; approvals and MCP configuration are a person's decision, so an agent's tool call cannot make them; run the command yourself in a terminal, or use /piagent-mcp in Pi"}
}

// selfShell stops a shell command that runs a piagent subcommand that
// changes decisions or configuration, or writes a guarded file. A command
// that cannot be parsed is stopped: what it runs is unknown.
func (in *Inspection) selfShell(g *Guarded, cmd string) (Decision, bool) {
	if cmd == "" {
		return Decision{}, false
	}
	a, err := shParse(cmd)
	if err != nil {
		return Decision{Action: ActionBlock, Code: CodeSelfParse,
			Reason: "blocked: the shell command cannot be parsed (" + err.Error() + "), so what it runs cannot be checked"}, true
	}
	for _, f := range shell.GateSelf(a, shell.Context{Home: g.Home, Cwd: g.Cwd, ProjectRoot: g.Cwd}) {
		return selfBlock(fmt.Sprintf("the command runs %s", f.Command)), true
	}
	for _, w := range shell.Writes(a) {
		if w.Dynamic {
			if suspicious(w.Lit) {
				return selfBlock(fmt.Sprintf("the command writes %s, which cannot be resolved before it runs", w.Lit)), true
			}
			if f, hit := g.holdsProtected(literalDir(w.Lit)); hit {
				return selfBlock(fmt.Sprintf("the command writes %s, which can reach %s", w.Lit, f)), true
			}
			continue
		}
		if f, hit := g.isProtected(w.Lit); hit {
			return selfBlock("the command writes " + f), true
		}
	}
	for _, w := range shell.Trees(a) {
		lit := w.Lit
		if w.Dynamic {
			lit = literalDir(lit)
		}
		if f, hit := g.holdsProtected(lit); hit {
			return selfBlock(fmt.Sprintf("the command %s replaces, moves or removes %s, which holds %s", quoteCmd(cmd), w.Lit, f)), true
		}
	}
	for _, w := range shell.Links(a) {
		if w.Dynamic {
			continue
		}
		if f, hit := g.isProtected(w.Lit); hit {
			return selfBlock("the command links to " + f + ", so a later write could reach it under another name"), true
		}
	}
	return Decision{}, false
}

// isProtected reports whether writing p (as a tool wrote it: relative to the
// cwd, with ~) would touch a registered file. Both the literal and the
// resolved form are checked, case-insensitively for the base name's sake on
// case-folding file systems.
func (g *Guarded) isProtected(p string) (string, bool) {
	return g.check(p, g.Reg.Match)
}

// holdsProtected reports whether p is, lies beneath, or holds a registered
// path: replacing, renaming or removing p changes it.
func (g *Guarded) holdsProtected(p string) (string, bool) {
	return g.check(p, func(a string) (string, bool) {
		if f, ok := g.Reg.Match(a); ok {
			return f, true
		}
		return g.Reg.Holds(a)
	})
}

func (g *Guarded) check(p string, match func(string) (string, bool)) (string, bool) {
	// A bare word (no slash, dot or ~) is a name in the cwd: a link there
	// leads anywhere, and the cwd may hold a registered file (piagent's own
	// binary), so it is judged like any other path.
	if p == "" {
		return "", false
	}
	if p = absPath(g.Home, g.Cwd, p); p == "" {
		return "", false
	}
	if f, ok := match(p); ok {
		return f, true
	}
	if g.Resolve != nil {
		if r := g.Resolve(p); r != "" && r != p {
			return match(r)
		}
	}
	return "", false
}

// absPath turns a path as a tool wrote it into a clean absolute path the
// way Pi's file tools do (paths.ToolPath); a path Pi would refuse resolves
// to "" and names nothing.
func absPath(home, cwd, p string) string {
	abs, ok := paths.ToolPath(home, cwd, p)
	if !ok {
		return ""
	}
	return abs
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
// one of the gate's files: piagent's and Pi's, or an import kind's
// (imports.Marked).
func suspicious(lit string) bool {
	l := strings.ToLower(lit)
	for _, frag := range []string{"mcp", "piagent", "settings.json", ".pi/", ".pi\\", ".agents", "$home", "~"} {
		if strings.Contains(l, frag) {
			return true
		}
	}
	return imports.Marked(l)
}

// piTool reports Pi's own tools, which the self-protection judges by the
// path or command they take; any other tool by every string in its input.
func piTool(name string) bool {
	switch name {
	case "bash", "write", "edit":
		return true
	}
	return ReadOnlyTool(name)
}
