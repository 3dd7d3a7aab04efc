package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
)

// BuiltinProvenance names the reader of Pi's own MCP client in every view.
const BuiltinProvenance = "Pi built-in MCP"

// BuiltinServer is one server Pi's built-in MCP client (Pi ≥ 0.99) would
// connect at session start, or lists as switched off.
type BuiltinServer struct {
	Name       string `json:"name"`
	Scope      string `json:"scope"`  // "global" (<agentDir>/mcp.json) or "project" (.pi/mcp.json)
	Source     string `json:"source"` // the file that defines it
	Override   string `json:"override,omitempty"`
	Enabled    bool   `json:"enabled"` // false: enabled: false, not started
	Repository bool   `json:"repositoryControlled"`
	Entry      Entry  `json:"-"`
	Provenance string `json:"provenance"`
}

// BuiltinView is what Pi's built-in client reads: <agentDir>/mcp.json and,
// when the project is trusted, <cwd>/.pi/mcp.json, as strict JSON. It
// honours enabled: false and ignores disabled, lifecycle, imports and
// settings. A project entry without command, url or type overrides the
// global server of that name, and may set only enabled, exposure and
// toolExposure. The list is a superset of what Pi starts: an entry Pi would
// reject for a field's value (a bad URL, say) is listed too.
type BuiltinView struct {
	Servers []BuiltinServer `json:"servers"`
	Errors  []string        `json:"errors"`
}

var builtinOverrideKeys = map[string]bool{"enabled": true, "exposure": true, "toolExposure": true}

// Builtin reads what Pi's built-in MCP client would, for a project whose
// trust is given.
func Builtin(agentDir, cwd string, trusted bool) BuiltinView {
	v := BuiltinView{Servers: []BuiltinServer{}, Errors: []string{}}
	byName := map[string]int{}
	read := func(path, scope string) {
		data, err := readConfig(path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			v.Errors = append(v.Errors, path+": "+err.Error())
			return
		}
		var doc struct {
			MCPServers json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &doc); err != nil {
			v.Errors = append(v.Errors, path+": "+err.Error())
			return
		}
		var servers map[string]any
		if len(doc.MCPServers) > 0 && string(doc.MCPServers) != "null" {
			if err := json.Unmarshal(doc.MCPServers, &servers); err != nil {
				v.Errors = append(v.Errors, path+`: expected an object with an "mcpServers" object`)
				return
			}
		}
		names := make([]string, 0, len(servers))
		for n := range servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			e, ok := servers[name].(map[string]any)
			if !ok {
				v.Errors = append(v.Errors, path+`: server "`+name+`" is not an object`)
				continue
			}
			_, hasCmd := e["command"]
			_, hasURL := e["url"]
			_, hasType := e["type"]
			if scope == "project" && !hasCmd && !hasURL && !hasType {
				i, ok := byName[name]
				if !ok {
					v.Errors = append(v.Errors, path+`: server "`+name+`" needs "command" or "url", or a global server to override`)
					continue
				}
				extra := false
				for k := range e {
					extra = extra || !builtinOverrideKeys[k]
				}
				if extra {
					v.Errors = append(v.Errors, path+`: server "`+name+`": an override can only set enabled, exposure, toolExposure`)
					continue
				}
				merged := Entry{}
				for k, x := range v.Servers[i].Entry {
					merged[k] = x
				}
				for k, x := range e {
					merged[k] = x
				}
				v.Servers[i].Entry, v.Servers[i].Override = merged, path
				v.Servers[i].Enabled = merged["enabled"] != false
				continue
			}
			_, cmdOK := e["command"].(string)
			_, urlOK := e["url"].(string)
			if !cmdOK && !urlOK {
				v.Errors = append(v.Errors, path+`: server "`+name+`" needs either "command" (stdio) or "url" (streamable HTTP)`)
				continue
			}
			s := BuiltinServer{Name: name, Scope: scope, Source: path, Enabled: e["enabled"] != false,
				Repository: scope == "project", Entry: Entry(e), Provenance: BuiltinProvenance}
			if i, ok := byName[name]; ok {
				v.Servers[i] = s
				continue
			}
			byName[name] = len(v.Servers)
			v.Servers = append(v.Servers, s)
		}
	}
	read(filepath.Join(agentDir, "mcp.json"), "global")
	if trusted {
		read(filepath.Join(cwd, ".pi", "mcp.json"), "project")
	}
	return v
}
