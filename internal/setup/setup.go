// Package setup is the pure core of `piagent setup`, `setup --check` and
// `uninstall`: it reads Pi's package list (the `packages` array of
// <agentDir>/settings.json), tells the piagent extension and pi-mcp-adapter
// apart from the user's other packages, and plans the `pi install` and
// `pi remove` runs that leave Pi with the extension matching this binary
// loaded before adapter 2.36.0. Pi's settings stay Pi's: every change goes
// through Pi's own package commands, never through a rewrite of its file.
//
// Pi loads user packages in the order the array lists them, and `pi install`
// appends a new source at the end (or replaces a matching one in place). So
// an adapter that is listed before the extension is moved by removing it and
// installing it again after the extension; an adapter entry in the object
// form (with resource filters) is not moved, because reinstalling would drop
// its filters: that is reported with the fix instead.
//
// The package also holds the record of what setup installed
// (~/.pi/piagent/setup.json), so that uninstall removes the adapter only
// when setup was the one that added it.
package setup

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/pihost"
)

// What setup installs and what it needs.
const (
	ExtensionName  = "@piagent/pi-extension" // the extension's package.json name
	AdapterName    = "pi-mcp-adapter"
	AdapterVersion = "2.36.0"
	AdapterSource  = "npm:" + AdapterName + "@" + AdapterVersion
)

// NodeFix is the fix for a Node too old for Pi. Pi goes again too: npm
// installed the newest Pi the old Node accepted.
func NodeFix() string {
	return fmt.Sprintf("install Node %d.%d or later and put it first on PATH (nvm, fnm or your package manager), then reinstall Pi with it: %s", MinNode.Major, MinNode.Minor, pihost.Install())
}

// MinNode is what Pi 0.86 declares in its engines field.
var MinNode = pihost.Version{Major: 22, Minor: 19}

// Problem is something setup will not do for the person, with the reason and
// the fix.
type Problem struct {
	Code   string `json:"code"` // stable: pi-missing, pi-old, node-missing, node-old, order, adapter-version, …
	Reason string `json:"reason"`
	Fix    string `json:"fix"`
}

func (p Problem) Error() string { return p.Reason }

// CheckPi says whether the Pi that `pi --version` described is new enough.
func CheckPi(out string) (pihost.Version, *Problem) {
	v, err := pihost.ParseVersion(out)
	return v, checkPi(v, err, out)
}

// checkPi says whether Pi v (read from out, or err) is new enough.
func checkPi(v pihost.Version, err error, out string) *Problem {
	if err != nil {
		return &Problem{Code: "pi-version", Reason: fmt.Sprintf("cannot read Pi's version from %q", firstLine(out)),
			Fix: "check that `pi --version` prints a version, or point PIAGENT_PI at Pi's executable"}
	}
	if v.Less(pihost.Min) {
		return &Problem{Code: "pi-old", Reason: fmt.Sprintf("Pi %s is older than %s, which the piagent extension and pi-mcp-adapter %s need", v, pihost.Min, AdapterVersion),
			Fix: "update Pi: " + pihost.Install() + " (npm installs the newest Pi whose engines accept the Node that runs npm: check node --version first)"}
	}
	return nil
}

// CheckNode says whether the Node that will run Pi is new enough.
func CheckNode(out string) (pihost.Version, *Problem) {
	v, err := pihost.ParseVersion(out)
	if err != nil {
		return v, &Problem{Code: "node-version", Reason: fmt.Sprintf("cannot read Node's version from %q", firstLine(out)),
			Fix: "check that `node --version` prints a version"}
	}
	if v.Less(MinNode) {
		return v, &Problem{Code: "node-old", Reason: fmt.Sprintf("Node %s is older than %s, which Pi %d.%d needs", v, MinNode, pihost.Min.Major, pihost.Min.Minor),
			Fix: NodeFix()}
	}
	return v, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 80 {
		l = l[:80] + "…"
	}
	return l
}

// Shebang reads the interpreter a script's first line names. viaEnv is set
// for "#!/usr/bin/env [-S] prog", where prog is looked up on PATH. ok is
// false when data is not a script.
func Shebang(data []byte) (prog string, viaEnv, ok bool) {
	s := string(data)
	if !strings.HasPrefix(s, "#!") {
		return "", false, false
	}
	line, _, _ := strings.Cut(s[2:], "\n")
	fields := strings.Fields(strings.TrimSuffix(line, "\r"))
	if len(fields) == 0 {
		return "", false, false
	}
	if base(fields[0]) != "env" {
		return fields[0], false, true
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue
		}
		return f, true, true
	}
	return "", false, false
}

// UsesNode reports whether a script's interpreter is Node.
func UsesNode(prog string) bool {
	b := base(prog)
	return b == "node" || b == "nodejs"
}

func base(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
