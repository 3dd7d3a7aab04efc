package imports

import "path/filepath"

// readOpencode reads ~/.config/opencode/opencode.json and the project's
// opencode.json (both, unlike every other kind), merges them with the project
// winning, and translates the `mcp` entries into the adapter's shape.
func (r *reader) readOpencode() {
	global := r.homePath(".config", "opencode", "opencode.json")
	project := r.opencodeProjectPath()

	merged := map[string]any{}
	contributed := map[string]int{} // server name -> candidate index of its highest contributor
	loaded := false
	for n, path := range []string{global, project} {
		i, v, ok := r.read(path, true)
		if n == 1 {
			// The project's file lies in the cwd or between it and the git
			// root: the repository owns it wherever it is.
			r.res.Candidates[i].InProject = true
		}
		doc, isObj := v.(map[string]any)
		if !ok || !isObj {
			continue
		}
		merged = mergeOpencode(merged, doc)
		loaded = true
		if mcp, ok := doc["mcp"].(map[string]any); ok {
			for name := range mcp {
				contributed[name] = i
			}
		}
	}
	if !loaded {
		return
	}
	servers := opencodeServers(merged)
	for _, name := range sortedKeys(servers) {
		c := r.res.Candidates[contributed[name]]
		r.res.Servers = append(r.res.Servers, Server{
			Name: name, Entry: servers[name], File: c.Path, Adapter: true, InProject: c.InProject,
		})
	}
}

// opencodeProjectPath finds the project file the way resolveImportCandidates
// does: the nearest directory from the cwd up that holds .git is the git
// root; the first opencode.json from the cwd up to it is the file (the git
// root's when none exists). Without a git root it is <cwd>/opencode.json.
func (r *reader) opencodeProjectPath() string {
	root := ""
	for d := r.cwd; ; {
		if r.exists(filepath.Join(d, ".git")) {
			root = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if root == "" {
		return filepath.Join(r.cwd, "opencode.json")
	}
	for d := r.cwd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "opencode.json")
		if r.exists(p) || d == root {
			return p
		}
	}
}

// mergeOpencode lays next over base like mergeOpenCodeConfigs: top-level keys
// shallowly, and `mcp` entries per server, with the safety resets when the
// override changes type, url or command, and environment, headers and oauth
// merged one level deep.
func mergeOpencode(base, next map[string]any) map[string]any {
	mcp := map[string]any{}
	if b, ok := base["mcp"].(map[string]any); ok {
		for k, v := range b {
			mcp[k] = v
		}
	}
	if n, ok := next["mcp"].(map[string]any); ok {
		for name, nv := range n {
			be, bok := mcp[name].(map[string]any)
			ne, nok := nv.(map[string]any)
			if !bok || !nok {
				mcp[name] = nv
				continue
			}
			mcp[name] = mergeOpencodeEntry(be, ne)
		}
	}
	out := shallowCopy(base)
	for k, v := range next {
		out[k] = v
	}
	out["mcp"] = mcp
	return out
}

func mergeOpencodeEntry(base, over map[string]any) map[string]any {
	safe := shallowCopy(base)
	if t, ok := over["type"].(string); ok && !jsEqual(t, safe["type"]) {
		for _, f := range []string{"command", "environment", "cwd", "url", "headers", "oauth"} {
			delete(safe, f)
		}
	}
	if u, ok := over["url"].(string); ok && !jsEqual(u, safe["url"]) {
		delete(safe, "headers")
		delete(safe, "oauth")
	}
	if oc, ok := over["command"].([]any); ok {
		bc, isArr := safe["command"].([]any)
		changed := !isArr || len(oc) != len(bc)
		for i := 0; !changed && i < len(oc); i++ {
			changed = !jsEqual(oc[i], bc[i])
		}
		if changed {
			delete(safe, "environment")
			delete(safe, "cwd")
		}
	}
	out := shallowCopy(safe)
	for k, v := range over {
		out[k] = v
	}
	for _, f := range []string{"environment", "headers", "oauth"} {
		bf, bok := safe[f].(map[string]any)
		nf, nok := over[f].(map[string]any)
		if bok && nok {
			m := shallowCopy(bf)
			for k, v := range nf {
				m[k] = v
			}
			out[f] = m
		}
	}
	return out
}

// jsEqual is `===` for values decoded from two different documents: objects
// and arrays are never identical; primitives compare by value (NaN never).
func jsEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		s, ok := b.(string)
		return ok && a == s
	case bool:
		x, ok := b.(bool)
		return ok && a == x
	case float64:
		x, ok := b.(float64)
		return ok && a == x
	}
	return false
}

// opencodeServers is extractServers for kind opencode: `mcp` entries, without
// those with enabled:false, local ones with a string-array command as
// command/args/env/cwd, remote ones with a url as url/headers/auth/oauth;
// anything else is dropped.
func opencodeServers(doc any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, v := range serverMap(doc, "mcp") {
		raw, ok := v.(map[string]any)
		if !ok || raw["enabled"] == false {
			continue
		}
		if e := opencodeLocal(raw); e != nil {
			out[name] = e
		} else if e := opencodeRemote(raw); e != nil {
			out[name] = e
		}
	}
	return out
}

func opencodeLocal(raw map[string]any) map[string]any {
	cmd, ok := raw["command"].([]any)
	if raw["type"] != "local" || !ok || len(cmd) == 0 {
		return nil
	}
	for _, c := range cmd {
		if _, ok := c.(string); !ok {
			return nil
		}
	}
	e := map[string]any{"command": cmd[0], "args": append([]any{}, cmd[1:]...)}
	if env := toStringRecord(raw["environment"]); env != nil {
		e["env"] = env
	}
	if cwd, ok := raw["cwd"].(string); ok {
		e["cwd"] = cwd
	}
	return e
}

// opencodeOAuthFields are the oauth fields the adapter keeps, with their types.
var opencodeOAuthFields = []struct {
	name string
	bool bool
}{
	{"clientId", false}, {"clientSecret", false}, {"clientMetadataUrl", false},
	{"scope", false}, {"authServerMetadataUrl", false}, {"skipIssuerMetadataValidation", true},
}

func opencodeRemote(raw map[string]any) map[string]any {
	url, ok := raw["url"].(string)
	if raw["type"] != "remote" || !ok {
		return nil
	}
	e := map[string]any{"url": url}
	if h := toStringRecord(raw["headers"]); h != nil {
		e["headers"] = h
	}
	switch o := raw["oauth"].(type) {
	case bool:
		if !o {
			e["oauth"] = false
		}
	case map[string]any:
		oauth := map[string]any{}
		for _, f := range opencodeOAuthFields {
			var ok bool
			if f.bool {
				_, ok = o[f.name].(bool)
			} else {
				_, ok = o[f.name].(string)
			}
			if ok {
				oauth[f.name] = o[f.name]
			}
		}
		e["auth"] = "oauth"
		e["oauth"] = oauth
	}
	return e
}
