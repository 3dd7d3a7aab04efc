package setup

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/safefile"
)

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
	loads, noExt := pihost.AdapterIn(args)
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
