package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/lazyre"
	"github.com/piagent/piagent/internal/paths"
)

// ---- Pi packages (package-mcp-loader.ts) ----

type packageRoot struct {
	root     string
	settings string // the settings.json that listed it
	project  bool   // listed in the project's settings.json
}

var (
	npmName    = lazyre.New(`^(@?[^@]+(?:/[^@]+)?)`)
	gitURL     = lazyre.New(`^(?:(?:https?|ssh)://|git@[^:]+:)`)
	gitSSHUser = lazyre.New(`^ssh://git@`)
	gitSCP     = lazyre.New(`^git@([^:]+):`)
	gitScheme  = lazyre.New(`(?i)^[a-z]+://`)
	gitRef     = lazyre.New(`@[^/]+$`)
	gitSuffix  = lazyre.New(`\.git$`)
	errAbsent  = errors.New("absent")
)

// readJSONC reads a file the adapter parses with parseJsonWithComments and
// no blank-file allowance: errAbsent when missing, an error when broken or
// blank (JSON.parse of nothing fails).
func (l *loader) readJSONC(p string) (any, error) {
	l.consultFile(p)
	if !exists(p) {
		return nil, errAbsent
	}
	data, err := readConfig(p)
	if errors.Is(err, jsonc.ErrBeyondLimits) {
		return nil, err
	}
	if err != nil {
		return nil, errors.New(errText(err))
	}
	v, blank, err := jsonc.ParseOwned(data)
	if blank {
		return nil, &jsonc.SyntaxError{Line: 1, Column: 1, Msg: "unexpected end of JSON input"}
	}
	return v, err
}

func (l *loader) skipParse(p, layer string, err error, fatal bool) {
	s := Skipped{Path: p, Layer: layer, Reason: err.Error(), Beyond: errors.Is(err, jsonc.ErrBeyondLimits)}
	var se *jsonc.SyntaxError
	if errors.As(err, &se) {
		s.Line, s.Column, s.Reason = se.Line, se.Column, "invalid JSONC: "+se.Msg
	}
	if fatal {
		s.Reason = FatalReason + s.Reason
	}
	l.skip(s)
}

// packageRoots lists the packages named in the project's and then the
// user's Pi settings.json. ok is false when the adapter would throw.
func (l *loader) packageRoots() (roots []packageRoot, ok bool) {
	v := l.view
	for _, src := range []struct {
		path, base string
		project    bool
	}{
		{filepath.Join(l.cwd, v.ConfigDir, "settings.json"), filepath.Join(l.cwd, v.ConfigDir), true},
		{filepath.Join(v.AgentDir, "settings.json"), v.AgentDir, false},
	} {
		raw, err := l.readJSONC(src.path)
		if err == errAbsent {
			continue
		}
		if err != nil {
			l.skipParse(src.path, LayerPackage, err, true)
			return nil, false
		}
		m, isObj := raw.(map[string]any)
		if !isObj {
			l.fatal(src.path, LayerPackage, "Pi settings must be a JSON object")
			return nil, false
		}
		pk, present := m["packages"]
		if !present {
			continue
		}
		list, isList := pk.([]any)
		if !isList {
			l.fatal(src.path, LayerPackage, "Pi settings packages must be an array")
			return nil, false
		}
		for _, e := range list {
			source := ""
			switch e := e.(type) {
			case string:
				source = e
			case map[string]any:
				source, _ = e["source"].(string)
			}
			if source == "" {
				l.fatal(src.path, LayerPackage, "Pi settings package entries must be strings or objects with a string source")
				return nil, false
			}
			root := resolvePackageRoot(source, src.base)
			if root == "" {
				continue
			}
			dup := false
			for _, r := range roots {
				dup = dup || r.root == root
			}
			if !dup {
				roots = append(roots, packageRoot{root: root, settings: src.path, project: src.project})
			}
		}
	}
	return roots, true
}

// resolvePackageRoot maps a Pi package source to the folder Pi installs it
// in: npm packages under <base>/npm/node_modules, git ones under <base>/git,
// local paths relative to base.
func resolvePackageRoot(source, base string) string {
	if rest, ok := strings.CutPrefix(source, "npm:"); ok {
		m := npmName().FindStringSubmatch(trimJS(rest))
		if m == nil {
			return ""
		}
		return containedPath(filepath.Join(base, "npm", "node_modules"), m[1])
	}
	git := ""
	if rest, ok := strings.CutPrefix(source, "git:"); ok {
		git = trimJS(rest)
	} else if gitURL().MatchString(source) {
		git = source
	}
	if git != "" {
		value := gitSSHUser().ReplaceAllString(git, "")
		value = gitSCP().ReplaceAllString(value, "$1/")
		value = gitScheme().ReplaceAllString(value, "")
		p := gitSuffix().ReplaceAllString(gitRef().ReplaceAllString(value, ""), "")
		if p == "" || strings.HasPrefix(p, "/") {
			return ""
		}
		return containedPath(filepath.Join(base, "git"), p)
	}
	if filepath.IsAbs(source) {
		return filepath.Clean(source)
	}
	return resolvePath(base, source)
}

// packages loads the servers of Pi packages with pi.mcp, named
// <pkg>__<server>; the first of a name wins.
func (l *loader) packages() *serverMap {
	out := newServerMap()
	roots, ok := l.packageRoots()
	if !ok {
		return out
	}
	for _, pr := range roots {
		manifestPath := filepath.Join(pr.root, "package.json")
		raw, err := l.readJSONC(manifestPath)
		if err == errAbsent {
			continue
		}
		if err != nil {
			l.skipParse(manifestPath, LayerPackage, err, true)
			return newServerMap()
		}
		manifest, isObj := raw.(map[string]any)
		if !isObj {
			continue
		}
		name, _ := manifest["name"].(string)
		if name == "" {
			continue
		}
		var mcp any
		if pi, ok := manifest["pi"].(map[string]any); ok {
			mcp = pi["mcp"]
		}
		var files []string
		switch m := mcp.(type) {
		case string:
			files = []string{m}
		case []any:
			for _, f := range m {
				s, ok := f.(string)
				if !ok {
					files = nil
					break
				}
				files = append(files, s)
			}
			if len(files) != len(m) {
				files = nil
			}
		}
		if files == nil {
			continue
		}
		prefix := formatNamePart(name, "package")
		seenHere := map[string]bool{}
		for _, f := range files {
			lexical := containedPath(pr.root, f)
			configPath := ""
			if lexical != "" {
				l.consultFile(lexical)
				if fi, err := os.Stat(lexical); err == nil && fi.Mode().IsRegular() {
					configPath = realContainedPath(pr.root, lexical, false)
				}
			}
			if configPath == "" {
				if lexical != "" && exists(lexical) {
					l.skip(Skipped{Path: lexical, Layer: LayerPackage, Reason: "pi.mcp file must stay inside the package " + name})
				}
				continue
			}
			raw, err := l.readJSONC(configPath)
			if err != nil {
				if err == errAbsent {
					err = errors.New("cannot read")
				}
				l.skipParse(configPath, LayerPackage, err, true)
				return newServerMap()
			}
			cfg, isObj := raw.(map[string]any)
			servers, serversObj := cfg["mcpServers"].(map[string]any)
			if !isObj || !serversObj {
				l.fatal(configPath, LayerPackage, "Pi package MCP config must be a JSON object with an mcpServers object")
				return newServerMap()
			}
			for _, sn := range sortedNames(servers) {
				entry, ok := servers[sn].(map[string]any)
				if !ok {
					l.fatal(configPath, LayerPackage, fmt.Sprintf("Pi package MCP server %q must be a JSON object", sn))
					return newServerMap()
				}
				full := prefix + "__" + formatNamePart(sn, "server")
				if seenHere[full] || out.has(full) {
					continue
				}
				seenHere[full] = true
				c := Contribution{Layer: LayerPackage, Scope: ScopePackage, File: configPath, Entry: entry}
				switch {
				case pr.project:
					c.Repository, c.Reason = true, "Pi package listed in "+l.rel(pr.settings)
				case l.inProject(pr.root):
					c.Repository, c.Reason = true, "Pi package inside the project"
				}
				out.set(full, leaf(c, 0))
			}
		}
	}
	return out
}

// ---- Agent Plugins (agent-plugin-loader.ts) ----

const (
	agentPluginSchema = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
	agentMCPSchema    = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
)

var (
	agentPluginName = lazyre.New(`^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$`)
	headerToken     = lazyre.New("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")
	loopback127     = lazyre.New(`^127(?:\.\d{1,3}){3}$`)
	pluginVar       = lazyre.New(`\$\{PLUGIN_(ROOT|DATA)\}`)
	stdioFields     = map[string]bool{"type": true, "command": true, "args": true, "env": true, "cwd": true}
	httpFields      = map[string]bool{"type": true, "url": true, "headers": true}
)

func (l *loader) expandHome(p string) string {
	switch {
	case p == "~":
		return l.home
	case strings.HasPrefix(p, "~/"):
		return resolvePath(l.home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return resolvePath(l.cwd, p)
}

// agentPlugins loads settings.agentPluginPaths, named <plugin>__<server>.
func (l *loader) agentPlugins() *serverMap {
	out := newServerMap()
	list, _ := l.view.Settings["agentPluginPaths"].([]any)
	origin, _ := l.settingWinner("agentPluginPaths")
	for _, e := range list {
		p, ok := e.(string)
		if !ok {
			continue
		}
		resolved := l.expandHome(p)
		l.consult(resolved)
		root := resolved
		if r, err := realpath(resolved); err == nil {
			root = r
		}
		name, ok := l.agentManifest(root)
		if !ok {
			continue
		}
		mcpPath := filepath.Join(root, "mcp.json")
		l.consultFile(mcpPath)
		fi, err := os.Stat(mcpPath)
		if err != nil {
			continue
		}
		bad := func(reason string) { l.skip(Skipped{Path: mcpPath, Layer: LayerAgentPlugin, Reason: reason}) }
		if !fi.Mode().IsRegular() {
			bad("mcp.json is not a regular file")
			continue
		}
		real := realContainedPath(root, mcpPath, false)
		if real == "" {
			bad("mcp.json must stay inside the plugin directory")
			continue
		}
		data, err := readConfig(real)
		var raw any
		if err == nil {
			err = json.Unmarshal(data, &raw)
		}
		if err != nil {
			bad("failed to parse mcp.json: " + err.Error())
			continue
		}
		cfg, ok := raw.(map[string]any)
		if !ok {
			bad("mcp.json must be an object")
			continue
		}
		unknown := ""
		for _, k := range sortedNames(cfg) {
			if k != "$schema" && k != "mcpServers" && unknown == "" {
				unknown = k
			}
		}
		servers, serversObj := cfg["mcpServers"].(map[string]any)
		switch {
		case unknown != "":
			bad("unknown top-level field " + unknown)
			continue
		case cfg["$schema"] != agentMCPSchema:
			bad("unsupported mcp.json $schema")
			continue
		case !serversObj:
			bad("mcpServers must be an object")
			continue
		}
		dataDir := filepath.Join(l.view.AgentDir, "agent-plugin-data", name)
		local := map[string]bool{}
		for _, sn := range sortedNames(servers) {
			entry, lit := translateAgentServer(root, dataDir, servers[sn])
			if entry == nil {
				continue
			}
			full := formatNamePart(name, "plugin") + "__" + formatNamePart(sn, "server")
			if local[full] {
				continue
			}
			local[full] = true
			if out.has(full) {
				continue
			}
			c := Contribution{Layer: LayerAgentPlugin, Scope: ScopePackage, File: real, Entry: entry}
			switch {
			case l.inProject(root):
				c.Repository, c.Reason = true, "plugin path inside the project"
			case origin.Repository:
				c.Repository, c.Reason = true, "plugin path chosen by the project's "+l.rel(origin.File)
			}
			out.set(full, leaf(c, lit))
		}
	}
	return out
}

// agentManifest validates <root>/plugin.json and returns the plugin name.
func (l *loader) agentManifest(root string) (string, bool) {
	p := filepath.Join(root, "plugin.json")
	l.consultFile(p)
	fi, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	bad := func(reason string) (string, bool) {
		l.skip(Skipped{Path: p, Layer: LayerAgentPlugin, Reason: reason})
		return "", false
	}
	if !fi.Mode().IsRegular() {
		return bad("plugin.json is not a regular file")
	}
	real := realContainedPath(root, p, false)
	if real == "" {
		return bad("plugin.json must stay inside the plugin directory")
	}
	data, err := readConfig(real)
	var raw any
	if err == nil {
		err = json.Unmarshal(data, &raw)
	}
	if err != nil {
		return bad("failed to parse plugin.json: " + err.Error())
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return bad("plugin.json must be an object")
	}
	if m["$schema"] != agentPluginSchema {
		return bad("unsupported plugin.json $schema")
	}
	name, _ := m["name"].(string)
	if len(name) < 1 || len(name) > 64 || !agentPluginName().MatchString(name) || strings.Contains(name, "--") || strings.Contains(name, "..") {
		return bad("plugin.json name is invalid")
	}
	for _, f := range []string{"version", "description", "homepage", "repository", "license"} {
		if x, ok := m[f]; ok {
			if _, ok := x.(string); !ok {
				return bad("plugin.json " + f + " must be a string")
			}
		}
	}
	if k, ok := m["keywords"]; ok && !isStringList(k) {
		return bad("plugin.json keywords must be an array of strings")
	}
	if a, ok := m["author"]; ok {
		am, ok := a.(map[string]any)
		good := ok
		for k, x := range am {
			_, isStr := x.(string)
			good = good && isStr && (k == "name" || k == "email" || k == "url")
		}
		if !good {
			return bad("plugin.json author is invalid")
		}
	}
	return name, true
}

func isStringList(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range list {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

// translateAgentServer turns one Agent Plugin server into the adapter's
// entry, or nil when the adapter skips it.
func translateAgentServer(root, dataDir string, v any) (Entry, uint8) {
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, 0
	}
	expand := func(s string) string {
		return pluginVar().ReplaceAllStringFunc(s, func(m string) string {
			if strings.Contains(m, "ROOT") {
				return root
			}
			return dataDir
		})
	}
	switch raw["type"] {
	case "stdio":
		for k := range raw {
			if !stdioFields[k] {
				return nil, 0
			}
		}
		command, _ := raw["command"].(string)
		if command == "" {
			return nil, 0
		}
		bare := !strings.ContainsAny(command, `/\`) && !strings.Contains(command, "${PLUGIN_ROOT}") && !strings.Contains(command, "${PLUGIN_DATA}")
		if !bare && !strings.HasPrefix(command, "./") {
			return nil, 0
		}
		args := []any{}
		if a, ok := raw["args"]; ok {
			if !isStringList(a) {
				return nil, 0
			}
			for _, x := range a.([]any) {
				args = append(args, expand(x.(string)))
			}
		}
		env := map[string]any{}
		if e, ok := raw["env"]; ok {
			em, ok := e.(map[string]any)
			if !ok {
				return nil, 0
			}
			for k, x := range em {
				s, ok := x.(string)
				if k == "PLUGIN_ROOT" || k == "PLUGIN_DATA" || !ok {
					return nil, 0
				}
				env[k] = expand(s)
			}
		}
		if strings.HasPrefix(command, "./") {
			command = realContainedPath(root, resolvePath(root, command), false)
			if command == "" {
				return nil, 0
			}
		}
		cwd := root
		if c, ok := raw["cwd"]; ok {
			cs, ok := c.(string)
			if !ok {
				return nil, 0
			}
			expanded := expand(cs)
			switch {
			case strings.HasPrefix(cs, "./") || cs == "${PLUGIN_ROOT}" || strings.HasPrefix(cs, "${PLUGIN_ROOT}/"):
				cwd = realContainedPath(root, resolvePath(root, expanded), false)
			case cs == "${PLUGIN_DATA}" || strings.HasPrefix(cs, "${PLUGIN_DATA}/"):
				cwd = ""
				if !exists(dataDir) || realContainedPath(filepath.Dir(dataDir), dataDir, false) != "" {
					cwd = realContainedPath(dataDir, resolvePath(dataDir, expanded), true)
				}
			default:
				cwd = ""
			}
			if cwd == "" {
				return nil, 0
			}
		}
		env["PLUGIN_ROOT"], env["PLUGIN_DATA"] = root, dataDir
		return Entry{
			"command": command, "args": args, "env": env, "cwd": cwd,
			"pluginDataDir": dataDir, "literalEnv": true,
		}, litArgs | litEnv | litCwd
	case "streamable-http", "sse":
		for k := range raw {
			if !httpFields[k] {
				return nil, 0
			}
		}
		u, _ := raw["url"].(string)
		if u == "" || !validPluginURL(u) {
			return nil, 0
		}
		e := Entry{"url": u, "httpTransport": raw["type"]}
		if h, ok := raw["headers"]; ok {
			hm, ok := h.(map[string]any)
			if !ok {
				return nil, 0
			}
			seen := map[string]bool{}
			headers := map[string]any{}
			for k, x := range hm {
				s, ok := x.(string)
				if !ok || seen[strings.ToLower(k)] || !headerToken().MatchString(k) || !validHeaderValue(s) {
					return nil, 0
				}
				seen[strings.ToLower(k)] = true
				headers[k] = s
			}
			if len(headers) > 0 {
				e["headers"] = headers
				return e, litHeaders
			}
		}
		return e, 0
	}
	return nil, 0
}

func validHeaderValue(s string) bool {
	for _, r := range s {
		if r > 0xff || r == 0 || r == '\r' || r == '\n' {
			return false
		}
	}
	return true
}

// validPluginURL is isValidAgentPluginUrl: no interpolation, http(s), no
// credentials or fragment, plain http only on loopback.
func validPluginURL(s string) bool {
	if strings.Contains(s, "${") || strings.Contains(s, "$env:") || strings.Contains(s, "{env:") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if u.User != nil || u.Fragment != "" {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	h := strings.ToLower(u.Hostname())
	return h == "localhost" || h == "127.0.0.1" || h == "::1" || loopback127().MatchString(h)
}

// ---- Claude plugins (claude-plugin-loader.ts) ----

var (
	claudeName       = lazyre.New(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	claudeStrFields  = []string{"$schema", "displayName", "version", "description", "homepage", "repository", "license"}
	claudeListFields = []string{"commands", "agents", "skills", "hooks", "mcpServers", "lspServers", "outputStyles"}
)

// claudePlugins loads the MCP servers of the claudePlugins the highest
// layer names, as defaults beneath higher, dropping any whose namespace
// collides with a differently named higher server.
func (l *loader) claudePlugins(higher *serverMap) *serverMap {
	out := newServerMap()
	var chooser *layerState
	for _, ls := range l.layers {
		if ls.Loaded && ls.HasClaudePlugins {
			chooser = ls
		}
	}
	if chooser == nil {
		return out
	}
	higherNS := map[string]bool{}
	for _, n := range higher.names {
		higherNS[serverNamespace(n)] = true
	}
	seenRoots := map[string]bool{}
	seenNS := map[string]bool{}
	for _, ref := range parseClaudePlugins(chooser.ClaudePlugins) {
		configured := l.expandHome(ref.path)
		l.consult(configured)
		fi, err := os.Stat(configured)
		if err != nil || !fi.IsDir() {
			continue
		}
		root, err := realpath(configured)
		if err != nil || seenRoots[root] {
			continue
		}
		seenRoots[root] = true
		name, ok := l.claudeManifest(root)
		if !ok {
			continue
		}
		if !ref.mcp {
			continue
		}
		cfgPath := filepath.Join(root, ".mcp.json")
		l.consultFile(cfgPath)
		fi, err = os.Stat(cfgPath)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		real, err := realpath(cfgPath)
		if err != nil || !paths.Within(root, real) {
			continue
		}
		data, err := readConfig(real)
		if err != nil {
			continue
		}
		raw, blank, err := jsonc.ParseOwned(data)
		if err != nil || blank {
			if err == nil {
				err = &jsonc.SyntaxError{Line: 1, Column: 1, Msg: "unexpected end of JSON input"}
			}
			l.skipParse(real, LayerClaudePlugin, err, false)
			continue
		}
		m, ok := raw.(map[string]any)
		servers, serversObj := m["mcpServers"].(map[string]any)
		if !ok || !serversObj {
			l.skip(Skipped{Path: real, Layer: LayerClaudePlugin, Reason: "Claude plugin " + name + " MCP config must contain an mcpServers object"})
			continue
		}
		if _, _, err := validateConfig(raw); err != nil {
			l.fatal(real, LayerClaudePlugin, err.Error())
			return newServerMap()
		}
		for _, sn := range sortedNames(servers) {
			if trimJS(sn) == "" {
				continue
			}
			entry, ok := servers[sn].(map[string]any)
			if !ok || !oneTransport(entry) {
				continue
			}
			ns := serverNamespace(sn)
			if seenNS[ns] {
				continue
			}
			seenNS[ns] = true
			if sn == "__proto__" || (higherNS[ns] && !higher.has(sn)) {
				continue
			}
			c := Contribution{Layer: LayerClaudePlugin, Scope: ScopePackage, File: real, Entry: replacePluginRoot(entry, root)}
			switch {
			case l.inProject(root):
				c.Repository, c.Reason = true, "Claude plugin inside the project"
			case chooser.Repository:
				c.Repository, c.Reason = true, "Claude plugin chosen by the project's "+l.rel(chooser.Path)
			}
			out.set(sn, leaf(c, 0))
		}
	}
	return out
}

// claudeManifest reads the optional .claude-plugin/plugin.json; ok is false
// when it exists but is invalid, which skips the plugin.
func (l *loader) claudeManifest(root string) (string, bool) {
	p := filepath.Join(root, ".claude-plugin", "plugin.json")
	l.consultFile(p)
	fallback := filepath.Base(root)
	fi, err := os.Stat(p)
	if err != nil {
		return fallback, true
	}
	bad := func(reason string) (string, bool) {
		l.skip(Skipped{Path: p, Layer: LayerClaudePlugin, Reason: reason})
		return "", false
	}
	if !fi.Mode().IsRegular() {
		return bad("Claude plugin manifest is not a regular file")
	}
	real, err := realpath(p)
	if err != nil {
		return fallback, true
	}
	if !paths.Within(root, real) {
		return bad("Claude plugin manifest resolves outside the plugin directory")
	}
	data, err := readConfig(real)
	if err != nil {
		return fallback, true
	}
	raw, _, err := jsonc.ParseOwned(data)
	if err != nil {
		l.skipParse(p, LayerClaudePlugin, err, false)
		return "", false
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return bad("Claude plugin manifest must be a JSON object")
	}
	name, _ := m["name"].(string)
	if !claudeName().MatchString(name) {
		return bad("Claude plugin manifest has an invalid name: expected kebab-case")
	}
	if !claudeFieldTypes(m) {
		return bad("Claude plugin manifest has invalid field types")
	}
	return name, true
}

func claudeFieldTypes(m map[string]any) bool {
	for _, f := range claudeStrFields {
		if x, ok := m[f]; ok {
			if _, ok := x.(string); !ok {
				return false
			}
		}
	}
	for _, f := range claudeListFields {
		if x, ok := m[f]; ok {
			if _, ok := x.(string); !ok && !isStringList(x) {
				return false
			}
		}
	}
	if x, ok := m["defaultEnabled"]; ok {
		if _, ok := x.(bool); !ok {
			return false
		}
	}
	if x, ok := m["keywords"]; ok && !isStringList(x) {
		return false
	}
	if x, ok := m["author"]; ok {
		a, ok := x.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := a["name"].(string); !ok {
			return false
		}
		for _, f := range []string{"email", "url"} {
			if y, ok := a[f]; ok {
				if _, ok := y.(string); !ok {
					return false
				}
			}
		}
	}
	if x, ok := m["metadata"]; ok {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func oneTransport(e Entry) bool {
	n := 0
	for _, k := range []string{"command", "url", "socket"} {
		if s, ok := e[k].(string); ok && trimJS(s) != "" {
			n++
		}
	}
	return n == 1
}

// replacePluginRoot expands ${CLAUDE_PLUGIN_ROOT} in every string value and
// gives a stdio server CLAUDE_PLUGIN_ROOT in its env.
func replacePluginRoot(e Entry, root string) Entry {
	out := replaceStrings(e, root).(map[string]any)
	if _, ok := out["command"].(string); ok {
		env := map[string]any{}
		switch old := out["env"].(type) {
		case map[string]any:
			for k, v := range old {
				env[k] = v
			}
		case []any:
			for i, v := range old {
				env[fmt.Sprint(i)] = v
			}
		case string:
			for i, r := range []rune(old) {
				env[fmt.Sprint(i)] = string(r)
			}
		}
		env["CLAUDE_PLUGIN_ROOT"] = root
		out["env"] = env
	}
	return out
}

func replaceStrings(v any, root string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "${CLAUDE_PLUGIN_ROOT}", root)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = replaceStrings(x, root)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = replaceStrings(x, root)
		}
		return out
	}
	return v
}
