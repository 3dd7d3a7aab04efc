package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
)

var (
	unsafeNameRun = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
	edgeDashes    = regexp.MustCompile(`^[_-]+|[_-]+$`)
	namespaceSafe = regexp.MustCompile(`^[A-Za-z0-9_]*$`)
)

// formatNamePart is the adapter's normalisation of package, plugin and
// server names inside `<pkg>__<server>` and `<plugin>__<server>`.
func formatNamePart(name, fallback string) string {
	s := edgeDashes.ReplaceAllString(unsafeNameRun.ReplaceAllString(name, "_"), "")
	if s == "" {
		return fallback
	}
	return s
}

const (
	namespaceMarker = "_mcpns_"
	namespaceMax    = 59
)

// serverNamespace is the adapter's formatServerNamespace: the name as it
// appears in `mcp__<ns>` tools, used to detect Claude plugin shadowing.
func serverNamespace(name string) string {
	normalized := strings.ReplaceAll(name, "-", "_")
	safe := namespaceSafe.MatchString(normalized) && !strings.HasPrefix(normalized, namespaceMarker)
	body, ns := normalized, normalized
	if !safe {
		var b strings.Builder
		for _, r := range normalized {
			switch {
			case r == '_':
				b.WriteString("__")
			case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
				b.WriteRune(r)
			default:
				b.WriteString("_" + strconv.FormatInt(int64(r), 16) + "_")
			}
		}
		body = b.String()
		ns = namespaceMarker + body
	}
	if len(ns) <= namespaceMax {
		return ns
	}
	sum := sha256.Sum256([]byte(ns))
	digest := hex.EncodeToString(sum[:])[:16]
	prefix := namespaceMarker + "_h_"
	head := body
	if n := namespaceMax - len(prefix) - len(digest) - 1; len(head) > n {
		head = head[:n]
	}
	return prefix + head + "_" + digest
}

// protoNames are the properties every JavaScript object inherits. The
// adapter's per-layer import expansion tests `!importedServers[name]`, so an
// imported server with one of these names is never taken; "__proto__" is
// lost wherever the adapter assigns a server into a plain object.
var protoNames = map[string]bool{
	"constructor": true, "__defineGetter__": true, "__defineSetter__": true, "hasOwnProperty": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"toString": true, "valueOf": true, "__proto__": true, "toLocaleString": true,
}
