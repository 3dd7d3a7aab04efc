package setup

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/piagent/piagent/internal/safefile"
)

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
