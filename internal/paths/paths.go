// Package paths resolves the places Pi and pi-mcp-adapter keep their files:
// the agent dir, the project config dir name and `~` expansion. Every input
// arrives as a value; nothing here reads the process environment.
package paths

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Getenv looks a variable up; a nil Getenv has no variables.
type Getenv func(string) string

func (g Getenv) get(k string) string {
	if g == nil {
		return ""
	}
	return g(k)
}

// piConfig is the piConfig block of the manifest PI_PACKAGE_DIR names, which
// distributions built on Pi use to rebrand it.
type piConfig struct {
	Name      any `json:"name"`
	ConfigDir any `json:"configDir"`
}

func readPiConfig(getenv Getenv) piConfig {
	dir := strings.TrimSpace(getenv.get("PI_PACKAGE_DIR"))
	if dir == "" {
		return piConfig{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return piConfig{}
	}
	data, err := os.ReadFile(filepath.Join(abs, "package.json"))
	if err != nil {
		return piConfig{}
	}
	var m struct {
		PiConfig piConfig `json:"piConfig"`
	}
	if json.Unmarshal(data, &m) != nil {
		return piConfig{}
	}
	return m.PiConfig
}

func trimmedString(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// ConfigDirName is the project config folder, ".pi" unless the Pi manifest
// under PI_PACKAGE_DIR renames it.
func ConfigDirName(getenv Getenv) string {
	if d := trimmedString(readPiConfig(getenv).ConfigDir); d != "" {
		return d
	}
	return ".pi"
}

// AppName is what the host calls itself: "pi" unless rebranded.
func AppName(getenv Getenv) string {
	if n := trimmedString(readPiConfig(getenv).Name); n != "" {
		return n
	}
	return "pi"
}

// AgentDirVar is the variable that overrides the agent dir:
// PI_CODING_AGENT_DIR, or <NAME>_CODING_AGENT_DIR for a rebranded host.
func AgentDirVar(getenv Getenv) string {
	return strings.ToUpper(AppName(getenv)) + "_CODING_AGENT_DIR"
}

// AgentDir resolves Pi's agent dir the way pi-mcp-adapter does: the override
// variable with `~` expanded, or <home>/<configDir>/agent. cwd resolves a
// relative override.
func AgentDir(home, cwd string, getenv Getenv) string {
	configured := strings.TrimSpace(getenv.get(AgentDirVar(getenv)))
	switch {
	case configured == "":
		return filepath.Join(home, ConfigDirName(getenv), "agent")
	case configured == "~":
		return home
	case strings.HasPrefix(configured, "~/"):
		return filepath.Join(home, configured[2:])
	}
	return Abs(cwd, configured)
}

// Abs resolves p against cwd when it is relative, and cleans it.
func Abs(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// Expand turns `~` and `~/x` into paths under home; other values are returned
// unchanged.
func Expand(home, p string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Within reports whether p is root or lies under it. Both must be clean and
// absolute.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
