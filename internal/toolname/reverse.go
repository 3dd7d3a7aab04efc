package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Server is what the reverse lookups need to know about one configured,
// enabled server.
type Server struct {
	Name string
	// Mode is the server's effective toolPrefix mode (see EffectiveMode).
	Mode string
	// Tools are the original MCP tool names from a valid metadata cache
	// entry. Tools and Resources both nil means the server has no valid
	// cache entry; pass an empty non-nil slice for a cached server that
	// lists no tools.
	Tools []string
	// Resources are the cached resource names, nil when the server does not
	// expose resources (exposeResources: false) or has no cache entry.
	Resources []string
	// DirectTools says whether the server registers direct tools (its own
	// directTools, settings.directTools or MCP_DIRECT_TOOLS). A caller that
	// cannot tell should say true.
	DirectTools bool
}

func (s Server) cached() bool { return s.Tools != nil || s.Resources != nil }

// OwnersOfDirect lists, in input order, every server that could own a direct
// tool named toolName:
//   - a server whose prefix under any of "server", "short" and "mcp" (its
//     own mode or not) starts the name followed by '_';
//   - a server whose effective prefix is empty ("none", or "server" for a
//     server named "") when one of its cached tools or resources produces
//     exactly that name, or when it has no cache entry, since then nothing
//     tells it apart.
//
// Only servers with DirectTools count. A name the adapter never registers
// as a direct tool (read, bash, edit, write, grep, find, ls, mcp) has no
// owner. Two owners mean the adapter skipped the name or the guard cannot
// tell; the caller must treat every one as involved.
func OwnersOfDirect(toolName string, servers []Server) []string {
	if builtin[toolName] {
		return nil
	}
	var out []string
	for _, s := range servers {
		if s.DirectTools && ownsDirect(toolName, s) {
			out = append(out, s.Name)
		}
	}
	return out
}

func ownsDirect(name string, s Server) bool {
	for _, m := range namedModes {
		if startsWithPrefix(name, s.Name, m, false, false) {
			return true
		}
	}
	mode := normMode(s.Mode)
	if mode != ModeNone && !(mode == ModeServer && s.Name == "") {
		return false
	}
	if !s.cached() {
		return true
	}
	for _, t := range s.Tools {
		if unprefixedEqual(t, name) {
			return true
		}
	}
	for _, r := range s.Resources {
		if ResourceTool(r) == name {
			return true
		}
	}
	return false
}

// OwnerOfNamespace returns the server whose namespace proxy is named
// toolName (mcp__<Namespace(server)>). It reports false when no server has
// that name, and when two or more do: the adapter registers no proxy for
// names that normalise to the same namespace.
func OwnerOfNamespace(toolName string, servers []string) (string, bool) {
	if len(toolName) < len("mcp__") || toolName[:5] != "mcp__" {
		return "", false
	}
	owner, n := "", 0
	for _, s := range servers {
		if NamespaceTool(s) == toolName {
			owner = s
			n++
		}
	}
	if n != 1 {
		return "", false
	}
	return owner, true
}

// CouldServe lists, in input order, every server that could end up serving
// an mcp proxy call {tool: toolName} that names no server. It is a superset
// of what the adapter's resolution (exact display name, original name,
// longest unique prefix, candidate forms, lazy connection by prefix) can
// pick:
//   - a server whose prefix under "server", "short" or "mcp", plain or in its
//     legacy form, starts the name followed by '_', with '-' and '_' read as
//     equal;
//   - a server with a cached tool or resource whose base name equals the
//     name once '-' and '.' are read as '_'.
//
// Every candidate name from CandidateNames falls under one of the two. A
// server with no cache entry and no matching prefix is not listed: the
// adapter has nothing to match it by and does not start it.
func CouldServe(toolName string, servers []Server) []string {
	var out []string
	for _, s := range servers {
		if couldServe(toolName, s) {
			out = append(out, s.Name)
		}
	}
	return out
}

func couldServe(name string, s Server) bool {
	for _, m := range namedModes {
		if startsWithPrefix(name, s.Name, m, false, true) || startsWithPrefix(name, s.Name, m, true, true) {
			return true
		}
	}
	for _, t := range s.Tools {
		if sameName(t, name) {
			return true
		}
	}
	for _, r := range s.Resources {
		if sameName(ResourceTool(r), name) {
			return true
		}
	}
	return false
}

// builtinMaxName is the longest tool name Pi's built-in MCP client gives
// (the provider limit); a longer one is cut and given an 8-hex suffix.
const builtinMaxName = 64

// builtinSafe is Pi's built-in client's sanitising: every byte outside
// [A-Za-z0-9_] becomes '_' (a multi-byte character becomes one '_' per
// UTF-16 unit in Pi; a server name with one is matched conservatively
// below).
func builtinSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__") // two UTF-16 units
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// OwnersOfBuiltin lists, in input order, every server whose tools Pi's
// built-in MCP client could name toolName: mcp__<server>__<tool> with
// everything outside [A-Za-z0-9_] made '_', or, when that is taken or
// longer than 64, its first 55 characters, '_' and 8 hex digits of a hash.
// Sanitising maps several server names to one prefix, so more than one
// server can be listed.
func OwnersOfBuiltin(toolName string, servers []string) []string {
	if !strings.HasPrefix(toolName, "mcp__") {
		return nil
	}
	hashed := len(toolName) == builtinMaxName && isHashSuffix(toolName[builtinMaxName-9:])
	var out []string
	for _, s := range servers {
		p := builtinSafe("mcp__" + s + "__")
		switch {
		case len(toolName) > len(p) && strings.HasPrefix(toolName, p):
			out = append(out, s)
		case hashed && strings.HasPrefix(p, toolName[:builtinMaxName-9]):
			out = append(out, s)
		}
	}
	return out
}

func isHashSuffix(s string) bool {
	if len(s) != 9 || s[0] != '_' {
		return false
	}
	for i := 1; i < 9; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// BuiltinToolName is the name Pi's built-in MCP client gives a server's
// tool when nothing else takes it: mcp__<server>__<tool>, everything
// outside [A-Za-z0-9_] made '_'; a longer name is cut to 55 characters and
// given '_' and 8 hex digits of sha256(server NUL tool).
func BuiltinToolName(server, tool string) string {
	name := builtinSafe("mcp__" + server + "__" + tool)
	if len(name) <= builtinMaxName {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return name[:builtinMaxName-9] + "_" + hex.EncodeToString(sum[:4])
}
