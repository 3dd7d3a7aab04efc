// Package pihost is what piagent knows of Pi as a host: where the Pi to
// start is (PIAGENT_PI, else pi on PATH), its version read by one rule (the
// package.json of the package its executable belongs to, else its
// --version), what each version implies for MCP (a built-in client from
// 0.99, --no-mcp to switch it off from 1.0.4), what its command line loads
// (-e, --no-extensions) and whether it trusts a project (trust.json). The
// launcher, setup, doctor and the engine ask it; none keeps a copy of these
// rules.
package pihost

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
)

// Package is Pi's npm package, and Tested the newest Pi the end-to-end
// suite pins (test/e2e/npm-pi16/package-lock.json; TestTestedPinned holds
// the two together): what a fix tells the person to install.
const (
	Package = "@earendil-works/pi-coding-agent"
	Tested  = "1.6.0"
)

// Install is the command that installs the Pi piagent is tested with.
func Install() string { return "npm install -g " + Package + "@" + Tested }

// Pi versions that change what piagent may do with Pi.
var (
	// Min is the oldest Pi the extension and adapter 2.36.0 work with.
	Min = Version{0, 86, 0}
	// BuiltinMCP is the first Pi with a built-in MCP client (builtin:mcp),
	// which connects every enabled server of <agentDir>/mcp.json and, in a
	// trusted project, .pi/mcp.json at session start.
	BuiltinMCP = Version{0, 99, 0}
	// NoMCPFlag is the first Pi with --no-mcp, which switches the built-in
	// client off and leaves extensions (the adapter) alone.
	NoMCPFlag = Version{1, 0, 4}
)

// HasBuiltinMCP reports whether Pi v has a built-in MCP client.
func HasBuiltinMCP(v Version) bool { return !v.Less(BuiltinMCP) }

// CanSwitchOffMCP reports whether Pi v takes --no-mcp.
func CanSwitchOffMCP(v Version) bool { return !v.Less(NoMCPFlag) }

// ErrVersion is a version string that is not major.minor.patch.
var ErrVersion = errors.New("not a version")

// Version is a release number; pre-release and build suffixes are dropped.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "0.86.1", "v22.19.0" or "22.19.0-rc.1" from the first
// line of a program's --version output. A missing patch reads as 0.
func ParseVersion(s string) (Version, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	line = strings.TrimSpace(line)
	// "pi 0.86.1" or "v22.19.0": the last word, without a leading v.
	if i := strings.LastIndexByte(line, ' '); i >= 0 {
		line = line[i+1:]
	}
	line = strings.TrimPrefix(line, "v")
	if i := strings.IndexAny(line, "-+"); i >= 0 {
		line = line[:i]
	}
	parts := strings.Split(line, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("%q: %w", s, ErrVersion)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || (len(p) > 1 && p[0] == '0') || len(p) > 9 {
			return Version{}, fmt.Errorf("%q: %w", s, ErrVersion)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// ReadVersion reads the version of the Pi at exe, by the one rule: the
// package.json of the Pi package exe belongs to, else what `exe --version`
// prints (output runs it). out is what --version printed when it ran; an
// error is output's, or wraps ErrVersion when what it printed is no
// version.
func ReadVersion(exe string, output func(argv ...string) (string, error)) (v Version, out string, err error) {
	if v, ok := PackageVersion(exe); ok {
		return v, "", nil
	}
	out, err = output(exe, "--version")
	if err != nil {
		return Version{}, out, err
	}
	v, err = ParseVersion(out)
	return v, out, err
}

// PackageVersion finds the version of the Pi package an executable
// belongs to, from the package.json above its real path; ok is false when
// it is not inside one (a wrapper script, a standalone binary).
func PackageVersion(exe string) (Version, bool) {
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
		if json.Unmarshal(data, &m) != nil || m.Name != Package {
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

// EnvPi names Pi's executable, in place of pi on PATH.
const EnvPi = "PIAGENT_PI"

// ErrNotFound: neither PIAGENT_PI nor PATH has Pi.
var ErrNotFound = errors.New("pi not found: PIAGENT_PI is not set and there is no pi on PATH")

// ErrNotExecutable: PIAGENT_PI names something that is not an executable
// file.
var ErrNotExecutable = errors.New("not an executable file")

// Find is the Pi to start: PIAGENT_PI (relative to dir, ~ for home), which
// must be an executable file, else pi on PATH. via says which: EnvPi or
// "PATH". An error names PIAGENT_PI's value (a *os.PathError, or
// ErrNotExecutable), or is ErrNotFound.
func Find(getenv func(string) string, home, dir string) (path, via string, err error) {
	if p := getenv(EnvPi); p != "" {
		p = paths.Abs(dir, paths.Expand(home, p))
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return p, EnvPi, err
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return p, EnvPi, ErrNotExecutable
		}
		return p, EnvPi, nil
	}
	if p := paths.LookPathAbs("pi", getenv("PATH"), os.Stat); p != "" {
		return p, "PATH", nil
	}
	return "", "", ErrNotFound
}

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
	if HasBuiltinMCP(v) && !CanSwitchOffMCP(v) {
		return LaunchPlan{
			Refuse: fmt.Sprintf("Pi %s has a built-in MCP client that piagent cannot switch off (--no-mcp arrived in Pi %s), so it could connect servers nobody approved", v, NoMCPFlag),
			Hint:   "update Pi: pi update --self (or npm install -g " + Package + "@latest)",
		}
	}
	p := LaunchPlan{Adapter: adapter, NoMCP: CanSwitchOffMCP(v)}
	if !adapter {
		p.Notice = "piagent: MCP servers are off in this session: pi-mcp-adapter is not installed; run 'piagent setup' to install it (piagent then starts only approved servers)"
	}
	return p
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
