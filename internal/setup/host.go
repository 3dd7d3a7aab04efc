package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/piagent/piagent/internal/safefile"
)

// Pi versions that change how MCP must be started.
var (
	// BuiltinMCP is the first Pi with a built-in MCP client (builtin:mcp),
	// which connects every enabled server of <agentDir>/mcp.json and, in a
	// trusted project, .pi/mcp.json at session start.
	BuiltinMCP = Version{0, 99, 0}
	// NoMCPFlag is the first Pi with --no-mcp, which switches the built-in
	// client off and leaves extensions (the adapter) alone.
	NoMCPFlag = Version{1, 0, 4}
)

// LaunchPlan is how piagent pi starts one Pi.
type LaunchPlan struct {
	// Adapter: hand the adapter the generated configuration
	// (--mcp-config, PI_MCP_CONFIG_MODE=exclusive).
	Adapter bool
	// NoMCP: pass --no-mcp so Pi's built-in client connects nothing.
	NoMCP bool
	// Refuse, when set, is why Pi must not be started at all, and Hint the
	// fix.
	Refuse, Hint string
	// Notice is said before Pi starts.
	Notice string
}

// PlanLaunch decides how to start Pi v, with or without the adapter loaded.
// Pi's built-in MCP client knows nothing of approvals: where it exists it is
// switched off, and where it cannot be switched off Pi is not started.
func PlanLaunch(v Version, adapter bool) LaunchPlan {
	builtin := !v.Less(BuiltinMCP)
	noMCP := !v.Less(NoMCPFlag)
	if builtin && !noMCP {
		return LaunchPlan{
			Refuse: fmt.Sprintf("Pi %s has a built-in MCP client that piagent cannot switch off (--no-mcp arrived in Pi %s), so it could connect servers nobody approved", v, NoMCPFlag),
			Hint:   "update Pi: pi update --self (or npm install -g @earendil-works/pi-coding-agent@latest)",
		}
	}
	p := LaunchPlan{Adapter: adapter, NoMCP: noMCP}
	if !adapter {
		p.Notice = "piagent: MCP servers are off in this session: pi-mcp-adapter is not installed; run 'piagent setup' to install it (piagent then starts only approved servers)"
	}
	return p
}

// PiPackageVersion finds the version of the Pi package an executable
// belongs to, from the package.json above its real path; ok is false when
// it is not inside one (a wrapper script, a standalone binary).
func PiPackageVersion(exe string) (Version, bool) {
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return Version{}, false
	}
	for dir := filepath.Dir(real); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		data, err := safefile.Read(filepath.Join(dir, "package.json"), safefile.Options{})
		if err != nil {
			continue
		}
		var m struct{ Name, Version string }
		if json.Unmarshal(data, &m) != nil || m.Name != "@earendil-works/pi-coding-agent" {
			if m.Name != "" {
				return Version{}, false // inside some other package
			}
			continue
		}
		v, err := ParseVersion(m.Version)
		return v, err == nil
	}
	return Version{}, false
}

// AdapterIn reports whether Pi's command-line arguments load
// pi-mcp-adapter (-e/--extension), and whether they switch discovered
// extensions off (--no-extensions): then the settings' packages do not load.
func AdapterIn(args []string) (loads, noExtensions bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-extensions" || a == "-ne":
			noExtensions = true
		case (a == "-e" || a == "--extension") && i+1 < len(args):
			if strings.Contains(args[i+1], "pi-mcp-adapter") {
				loads = true
			}
			i++
		case strings.HasPrefix(a, "--extension="):
			loads = loads || strings.Contains(a, "pi-mcp-adapter")
		}
	}
	return loads, noExtensions
}

// Trust is a project's state in Pi's trust.json (<agentDir>/trust.json),
// found the way Pi finds it: the nearest entry at the project or any
// folder above it.
type Trust struct {
	Trusted bool   `json:"trusted"`
	Decided bool   `json:"decided"`        // false: no entry; Pi asks (or, without a UI, ignores project files)
	From    string `json:"from,omitempty"` // the folder whose entry decides
	Err     string `json:"error,omitempty"`
}

// ProjectTrust reads trust.json for project.
func ProjectTrust(agentDir, project string) Trust {
	data, err := safefile.Read(filepath.Join(agentDir, "trust.json"), safefile.Options{})
	if err != nil {
		if os.IsNotExist(err) {
			return Trust{}
		}
		return Trust{Err: err.Error()}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(string(data), "\ufeff")), &m); err != nil {
		return Trust{Err: "trust.json: " + err.Error()}
	}
	for dir := filepath.Clean(project); ; dir = filepath.Dir(dir) {
		if v, ok := m[dir].(bool); ok {
			return Trust{Trusted: v, Decided: true, From: dir}
		}
		if dir == filepath.Dir(dir) {
			return Trust{}
		}
	}
}

// ReadManifest reads name and version from dir/package.json.
func ReadManifest(dir string) (Manifest, bool) {
	data, err := safefile.Read(filepath.Join(dir, "package.json"), safefile.Options{})
	if err != nil {
		return Manifest{}, false
	}
	var m struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if json.Unmarshal(data, &m) != nil {
		return Manifest{}, false
	}
	return Manifest{Name: m.Name, Version: m.Version}, true
}

// AdapterLoads reports whether a Pi session started with args loads
// pi-mcp-adapter: an -e argument naming it, else (unless --no-extensions)
// a package entry in the agent dir's settings.json, from npm or a local
// folder whose package.json names it. A settings file that cannot be read
// or parsed is an error; each caller decides which way is closed for it.
func AdapterLoads(agentDir, home string, args []string) (bool, error) {
	loads, noExt := AdapterIn(args)
	for i := 0; !loads && i+1 < len(args); i++ {
		// an -e folder whose package.json names the adapter
		if args[i] == "-e" || args[i] == "--extension" {
			m, ok := ReadManifest(args[i+1])
			loads = ok && m.Name == AdapterName
		}
	}
	if loads || noExt {
		return loads, nil
	}
	data, err := safefile.Read(filepath.Join(agentDir, "settings.json"), safefile.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	entries, err := ParsePackages(data)
	if err != nil {
		return false, err
	}
	for _, p := range Classify(entries, Where{AgentDir: agentDir, Home: home}, ReadManifest) {
		if p.Kind == KindAdapter {
			return true, nil
		}
	}
	return false, nil
}
