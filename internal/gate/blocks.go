package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/lazyre"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/safefile"
)

// directEnv is MCP_DIRECT_TOOLS, which overrides every directTools choice:
// "srv" or "srv/tool" selectors, or __none__ for no direct tools at all.
type directEnv struct {
	set     bool
	none    bool
	servers map[string]bool
}

func parseDirectEnv(raw string) directEnv {
	if raw == "" {
		return directEnv{}
	}
	d := directEnv{set: true, servers: map[string]bool{}}
	if raw == "__none__" {
		d.none = true
		return d
	}
	for _, sel := range strings.Split(raw, ",") {
		sel = strings.TrimSpace(sel)
		if sel == "" {
			continue
		}
		srv, _, _ := strings.Cut(sel, "/")
		d.servers[srv] = true
	}
	return d
}

// enabled reports whether a server gets direct tools.
func (d directEnv) enabled(name string, e mcpconfig.Entry, settings map[string]any) bool {
	if d.set {
		return !d.none && d.servers[name]
	}
	sel, ok := e["directTools"]
	if !ok {
		sel = settings["directTools"]
	}
	switch x := sel.(type) {
	case bool:
		return x
	case string:
		return x == "search"
	case []any:
		return len(x) > 0
	}
	return false
}

func (in *Input) blocks(g *Gate, direct directEnv) []Block {
	var out []Block
	var names, files []string
	for _, s := range g.Servers {
		if !s.Repository || s.State == Disabled || !s.DirectTools || s.Prefix != "none" || !s.Config.AdapterLoads {
			continue
		}
		names = append(names, s.Name)
		files = append(files, keyFiles(s.Config, in.View, "toolPrefix", "directTools")...)
		if direct.set {
			files = append(files, "MCP_DIRECT_TOOLS (environment)")
		}
	}
	if len(names) > 0 {
		slices.Sort(files)
		out = append(out, Block{
			Code: BlockDirectToolsNoPrefix,
			Reason: fmt.Sprintf("direct tools with toolPrefix \"none\" for repository server %s: a direct tool's name then carries no server, so approval cannot be checked",
				strings.Join(names, ", ")),
			Files: slices.Compact(files),
			Fix: Fix{Text: "remove directTools or set toolPrefix to \"server\" in any one of these files, or switch the server off with",
				Steps: []Step{step("disable", names...)}, Quoted: true,
				Note: "(reject does not lift this block: a rejected server's direct tools still carry no server name)"},
		})
	}
	for _, sk := range in.View.Skipped {
		if !sk.Beyond {
			continue
		}
		out = append(out, Block{
			Code:   BlockUnreadableLayer,
			Reason: fmt.Sprintf("%s is read by the adapter but not by piagent (%s), so the servers it declares cannot be checked", sk.Path, sk.Reason),
			Files:  []string{sk.Path},
			Fix:    Fix{Text: fmt.Sprintf("make %s a regular file of at most %d MiB with JSON nested at most 10000 levels, or remove it", sk.Path, safefile.DefaultMax>>20)},
		})
	}
	for _, t := range in.View.ImportTargets {
		if !t.Repository || t.Status != mcpconfig.TargetUnreadable {
			continue
		}
		where := t.Path
		if t.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", t.Path, t.Line, t.Column)
		}
		out = append(out, Block{
			Code:   BlockUnreadableImport,
			Reason: fmt.Sprintf("%s import %s exists but cannot be read (%s); a present but unreadable source is not an empty one", t.Kind, where, t.Error),
			Files:  append([]string{t.Path}, t.DeclaredBy...),
			Fix:    Fix{Text: "repair " + t.Path + " or remove \"" + t.Kind + "\" from imports"},
		})
	}
	return out
}

// keyFiles names the files whose values decide keys for a server: the
// server's own contributions that set them, and the highest settings layer.
func keyFiles(cs *mcpconfig.Server, v *mcpconfig.View, keys ...string) []string {
	var out []string
	for _, k := range keys {
		own := false
		for _, c := range cs.Contributions {
			if _, ok := c.Entry[k]; ok {
				out = append(out, c.File)
				own = true
			}
		}
		if !own {
			if o := v.SettingOrigins[k]; len(o) > 0 {
				out = append(out, o[len(o)-1].File)
			}
		}
	}
	return out
}

// weakening lists settings that switch off the adapter's own protections or
// widen what runs; a repository layer setting them earns a warning.
var weakening = []string{"approveTools", "samplingAutoApprove", "autoAuth", "outputGuard", "trace", "oauthDir",
	"hostConfigDiscovery", "agentPluginPaths", "claudePlugins", "jev"}

func weakens(key string, v any) bool {
	switch key {
	case "approveTools", "outputGuard":
		return v == false
	case "samplingAutoApprove", "autoAuth":
		return v == true
	case "hostConfigDiscovery":
		return v == "on" || v == "prompt"
	case "trace":
		m, ok := v.(map[string]any)
		_, hasFile := m["file"]
		return ok && hasFile
	}
	return v != nil
}

var unpinnedPkg = lazyre.New(`^(@[^/@\s]+/)?[^@/\s]+(@(latest|next|\^.*|~.*|\*|[<>=].*|\d+|\d+\.\d+|\d+\.x.*))?$`)

func (in *Input) warnings(g *Gate) []Warning {
	var out []Warning
	for _, key := range weakening {
		for _, o := range in.View.SettingOrigins[key] {
			if o.Repository && weakens(key, o.Value) {
				out = append(out, Warning{Code: "repository-setting", File: o.File,
					Text: fmt.Sprintf("the repository sets settings.%s, which weakens the adapter's own protections", key)})
			}
		}
	}
	for _, s := range g.Servers {
		if !s.Repository {
			continue
		}
		if w, ok := unpinnable(s.Config.Entry); ok {
			out = append(out, Warning{Code: "unpinned-target", Server: s.Name, Text: w})
		}
	}
	if g.StoreErr != nil {
		out = append(out, Warning{Code: "store-unreadable", Text: g.StoreErr.Error()})
	}
	for _, ig := range in.View.Ignored {
		out = append(out, Warning{Code: "ignored-entry", File: ig.Path, Text: ig.Reason})
	}
	return out
}

// unpinnable reports a target the definition cannot pin: a package runner
// without an exact version, or a container image without a digest.
func unpinnable(e mcpconfig.Entry) (string, bool) {
	cmd, _ := e["command"].(string)
	args := stringArgs(e["args"])
	base := cmd[strings.LastIndex(cmd, "/")+1:]
	switch base {
	case "npx", "bunx", "pnpx", "uvx", "pipx":
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if base == "uvx" || base == "pipx" {
				if base == "pipx" && a == "run" {
					continue
				}
				if !strings.Contains(a, "==") && !strings.Contains(a, "@") {
					return fmt.Sprintf("%s runs %s without an exact version; what runs can change without the definition changing", base, a), true
				}
				return "", false
			}
			if strings.HasPrefix(a, ".") || strings.HasPrefix(a, "/") {
				return "", false
			}
			if unpinnedPkg().MatchString(a) {
				return fmt.Sprintf("%s runs %s without an exact version; what runs can change without the definition changing", base, a), true
			}
			return "", false
		}
	case "docker", "podman":
		if len(args) == 0 || args[0] != "run" {
			return "", false
		}
		for i := 1; i < len(args); i++ {
			a := args[i]
			if strings.HasPrefix(a, "-") {
				if slices.Contains([]string{"-e", "--env", "-v", "--volume", "--name", "-p", "--network", "-w", "--workdir", "-u", "--user", "--entrypoint", "--mount", "--platform"}, a) {
					i++
				}
				continue
			}
			if !strings.Contains(a, "@sha256:") {
				return fmt.Sprintf("%s image %s has no digest; the image can change under the same tag", base, a), true
			}
			return "", false
		}
	}
	return "", false
}

func stringArgs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
