package mcpconfig

import (
	"github.com/piagent/piagent/internal/lazyre"
	"github.com/piagent/piagent/internal/toolname"
)

var (
	unsafeNameRun = lazyre.New(`[^A-Za-z0-9_-]+`)
	edgeDashes    = lazyre.New(`^[_-]+|[_-]+$`)
)

// formatNamePart is the adapter's normalisation of package, plugin and
// server names inside `<pkg>__<server>` and `<plugin>__<server>`.
func formatNamePart(name, fallback string) string {
	s := edgeDashes().ReplaceAllString(unsafeNameRun().ReplaceAllString(name, "_"), "")
	if s == "" {
		return fallback
	}
	return s
}

// serverNamespace is the adapter's formatServerNamespace: the name as it
// appears in `mcp__<ns>` tools, used to detect Claude plugin shadowing.
func serverNamespace(name string) string { return toolname.Namespace(name) }

// protoNames are the properties every JavaScript object inherits. The
// adapter's per-layer import expansion tests `!importedServers[name]`, so an
// imported server with one of these names is never taken; "__proto__" is
// lost wherever the adapter assigns a server into a plain object.
var protoNames = map[string]bool{
	"constructor": true, "__defineGetter__": true, "__defineSetter__": true, "hasOwnProperty": true,
	"__lookupGetter__": true, "__lookupSetter__": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"toString": true, "valueOf": true, "__proto__": true, "toLocaleString": true,
}
