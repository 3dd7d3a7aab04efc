// Package toolname reproduces how pi-mcp-adapter 2.36.0 names the tools it
// registers for MCP servers (direct tools under the four toolPrefix modes,
// resource tools, the mcp__<namespace> proxies, the candidate forms the mcp
// proxy accepts) and answers the reverse question a guard has to ask: which
// configured servers could stand behind a given tool name.
//
// The forward functions match the adapter byte for byte for valid UTF-8
// input. The reverse functions are deliberately generous: they return every
// server that could be involved, because a server left out would be a server
// the guard lets through without approval. Everything here is pure.
package toolname

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The toolPrefix modes the adapter knows. Any other value behaves as
// ModeServer.
const (
	ModeServer = "server"
	ModeShort  = "short"
	ModeMCP    = "mcp"
	ModeNone   = "none"
)

// namedModes are the modes whose prefix carries the server's name.
var namedModes = [...]string{ModeServer, ModeShort, ModeMCP}

// builtin holds the names the adapter refuses to register as direct tools,
// because Pi already has a tool of that name.
var builtin = map[string]bool{
	"read": true, "bash": true, "edit": true, "write": true,
	"grep": true, "find": true, "ls": true, "mcp": true,
}

// normMode maps a toolPrefix value to the mode the adapter applies: the
// adapter compares against "none", "short" and "mcp" and treats everything
// else as "server".
func normMode(mode string) string {
	switch mode {
	case ModeNone, ModeShort, ModeMCP:
		return mode
	}
	return ModeServer
}

// EffectiveMode is the toolPrefix mode that applies to one server: its own
// toolPrefix when set, else settings.toolPrefix, else "server". The arguments
// are the values as JSON decodes them; nil means absent or null. A set value
// that is not one of the adapter's modes (including a non-string) wins over
// the settings value and behaves as "server", as it does in the adapter.
func EffectiveMode(serverToolPrefix, settingsToolPrefix any) string {
	v := serverToolPrefix
	if v == nil {
		v = settingsToolPrefix
	}
	s, _ := v.(string)
	return normMode(s)
}

// plain reports whether r is kept as is by the adapter's prefix escaping.
// The legacy escaping (used only for candidate names) also escapes '_' and
// '-'.
func plain(r rune, legacy bool) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r == '_', r == '-':
		return !legacy
	}
	return false
}

func escape(server string, legacy bool) string {
	var b strings.Builder
	b.Grow(len(server))
	for _, r := range server {
		if plain(r, legacy) {
			b.WriteByte(byte(r))
			continue
		}
		b.WriteByte('_')
		b.WriteString(strconv.FormatInt(int64(r), 16))
		b.WriteByte('_')
	}
	return b.String()
}

// shortBase removes a trailing "mcp" or "-mcp" (ASCII, any case), as the
// short mode does before escaping.
func shortBase(server string) string {
	n := len(server)
	if n < 3 {
		return server
	}
	tail := server[n-3:]
	if lower(tail[0]) != 'm' || lower(tail[1]) != 'c' || lower(tail[2]) != 'p' {
		return server
	}
	base := server[:n-3]
	return strings.TrimSuffix(base, "-")
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func prefix(server, mode string, legacy bool) string {
	switch normMode(mode) {
	case ModeNone:
		return ""
	case ModeShort:
		if p := escape(shortBase(server), legacy); p != "" {
			return p
		}
		return "mcp"
	case ModeMCP:
		return "mcp__" + escape(server, legacy)
	}
	return escape(server, legacy)
}

// Prefix is the prefix the adapter puts before a server's direct tools
// (getServerPrefix): the escaped name for "server" (and for any unknown
// mode), the escaped name without a trailing "mcp"/"-mcp" for "short" ("mcp"
// when nothing remains), "mcp__" plus the escaped name for "mcp", and "" for
// "none". A server named "" has the empty prefix in "server" mode.
func Prefix(server, mode string) string { return prefix(server, mode, false) }

// ToolName is the adapter's formatToolName for a prefix from Prefix: dots in
// the MCP tool name become '_', and the result is prefix + "_" + tool, except
// that a tool that already starts with prefix + "_" (and has more after it)
// is not prefixed again, and an empty prefix leaves the tool name alone.
func ToolName(prefix, tool string) string {
	sanitized := strings.ReplaceAll(tool, ".", "_")
	if prefix == "" {
		return sanitized
	}
	if len(sanitized) > len(prefix)+1 && strings.HasPrefix(sanitized, prefix) && sanitized[len(prefix)] == '_' {
		return sanitized
	}
	return prefix + "_" + sanitized
}

// ResourceTool is the base tool name (before prefixing) of the tool that
// reads an MCP resource: "read_" followed by the resource name with every run
// of characters outside [A-Za-z0-9] turned into one '_', leading and
// trailing '_' trimmed, lower-cased, and "resource" put in front ("resource_"
// when something remains) if the result is empty or starts with a digit.
func ResourceTool(resourceName string) string {
	var b strings.Builder
	b.Grow(len(resourceName) + 14)
	b.WriteString("read_")
	pendingSep := false
	wrote := false
	for i := 0; i < len(resourceName); i++ {
		c := resourceName[i]
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum {
			pendingSep = wrote
			continue
		}
		if !wrote && c >= '0' && c <= '9' {
			b.WriteString("resource_")
		}
		if pendingSep {
			b.WriteByte('_')
			pendingSep = false
		}
		b.WriteByte(lower(c))
		wrote = true
	}
	if !wrote {
		b.WriteString("resource")
	}
	return b.String()
}

const (
	nsMarker = "_mcpns_"
	nsMaxLen = 59 // provider tool-name limit 64 minus "mcp__"
)

// Namespace is the adapter's formatServerNamespace: hyphens become '_'; a
// name that then still has characters outside [A-Za-z0-9_], or that starts
// with "_mcpns_", is encoded as "_mcpns_" followed by the name with '_'
// doubled and every other character outside [A-Za-z0-9] written as
// _<hex code point>_; a result longer than 59 characters becomes
// "_mcpns__h_" + its first 32 characters + "_" + the first 16 hex digits of
// the sha256 of the full result.
func Namespace(server string) string {
	normalized := strings.ReplaceAll(server, "-", "_")
	safe := !strings.HasPrefix(normalized, nsMarker)
	if safe {
		for i := 0; i < len(normalized); i++ {
			c := normalized[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				safe = false
				break
			}
		}
	}
	body, ns := normalized, normalized
	if !safe {
		var b strings.Builder
		for _, r := range normalized {
			switch {
			case r == '_':
				b.WriteString("__")
			case plain(r, true):
				b.WriteByte(byte(r))
			default:
				b.WriteByte('_')
				b.WriteString(strconv.FormatInt(int64(r), 16))
				b.WriteByte('_')
			}
		}
		body = b.String()
		ns = nsMarker + body
	}
	if len(ns) <= nsMaxLen {
		return ns
	}
	sum := sha256.Sum256([]byte(ns))
	digest := hex.EncodeToString(sum[:])[:16]
	hashPrefix := nsMarker + "_h_"
	head := body[:nsMaxLen-len(hashPrefix)-len(digest)-1]
	return hashPrefix + head + "_" + digest
}

// NamespaceTool is the name of a server's namespace proxy tool:
// "mcp__" + Namespace(server).
func NamespaceTool(server string) string { return "mcp__" + Namespace(server) }

// matchEscaped reports how many bytes of name the escaped form of s takes up
// at its start, or -1 when name does not start with it. With fold, '-' and
// '_' compare equal. It allocates nothing.
func matchEscaped(name, s string, legacy, fold bool) int {
	i := 0
	var hexbuf [8]byte
	for j := 0; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if plain(r, legacy) {
			if i >= len(name) || !sameByte(name[i], byte(r), fold) {
				return -1
			}
			i++
			continue
		}
		h := strconv.AppendInt(hexbuf[:0], int64(r), 16)
		if i+len(h)+2 > len(name) || !sameByte(name[i], '_', fold) || name[i+1:i+1+len(h)] != string(h) || !sameByte(name[i+1+len(h)], '_', fold) {
			return -1
		}
		i += len(h) + 2
	}
	return i
}

func sameByte(a, b byte, fold bool) bool {
	if a == b {
		return true
	}
	return fold && (a == '-' || a == '_') && (b == '-' || b == '_')
}

// startsWithPrefix reports whether name starts with prefix(server, mode) and
// then '_', for a mode that carries the server's name, without building the
// prefix. An empty prefix never matches.
func startsWithPrefix(name, server, mode string, legacy, fold bool) bool {
	n := -1
	switch mode {
	case ModeShort:
		base := shortBase(server)
		if base == "" {
			if strings.HasPrefix(name, "mcp") {
				n = 3
			}
		} else {
			n = matchEscaped(name, base, legacy, fold)
		}
	case ModeMCP:
		if len(name) >= 5 && name[:3] == "mcp" && sameByte(name[3], '_', fold) && sameByte(name[4], '_', fold) {
			if m := matchEscaped(name[5:], server, legacy, fold); m >= 0 {
				n = 5 + m
			}
		}
	default:
		n = matchEscaped(name, server, legacy, fold)
	}
	return n > 0 && n < len(name) && sameByte(name[n], '_', fold)
}

// sameName reports whether a and b are equal once '-' and '.' are read as
// '_' on both sides.
func sameName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == '-' || x == '.' {
			x = '_'
		}
		if y == '-' || y == '.' {
			y = '_'
		}
		if x != y {
			return false
		}
	}
	return true
}

// unprefixedEqual reports whether ToolName("", tool) == name.
func unprefixedEqual(tool, name string) bool {
	if len(tool) != len(name) {
		return false
	}
	for i := 0; i < len(tool); i++ {
		c := tool[i]
		if c == '.' {
			c = '_'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
