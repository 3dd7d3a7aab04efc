package setup

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/paths"
)

// ErrSettings is a settings.json whose packages cannot be read.
var ErrSettings = errors.New("cannot read Pi's settings")

// Entry is one element of the packages array, as Pi keeps it.
type Entry struct {
	Source string `json:"source"`
	// Object is the {source, extensions, skills, …} form: resource filters
	// that `pi remove` followed by `pi install` would drop.
	Object bool `json:"object,omitempty"`
}

// ParsePackages reads the packages array of a settings.json. A missing
// (nil), blank or packages-less file has none. Elements that are neither a
// string nor an object with a string source are skipped, as Pi skips them.
func ParsePackages(data []byte) ([]Entry, error) {
	if data == nil {
		return nil, nil
	}
	v, blank, err := jsonc.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if blank {
		return nil, nil
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the top level is not an object", ErrSettings)
	}
	raw, ok := top["packages"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: packages is not an array", ErrSettings)
	}
	var out []Entry
	for _, x := range list {
		switch x := x.(type) {
		case string:
			out = append(out, Entry{Source: x})
		case map[string]any:
			if s, ok := x["source"].(string); ok {
				out = append(out, Entry{Source: s, Object: true})
			}
		}
	}
	return out, nil
}

// Kind tells piagent's packages from the rest.
type Kind string

// Kinds of Package.
const (
	KindOther     Kind = "other"
	KindExtension Kind = "extension" // a package whose package.json is the piagent extension
	KindAdapter   Kind = "adapter"   // npm:pi-mcp-adapter, any version
)

// Package is one classified entry.
type Package struct {
	Entry
	Index   int    `json:"index"`
	Kind    Kind   `json:"kind"`
	Path    string `json:"path,omitempty"`    // a local source, resolved against the agent dir
	Version string `json:"version,omitempty"` // the adapter's spec version, or the extension's package.json version
}

// Manifest is what a local package's package.json says.
type Manifest struct{ Name, Version string }

// IsLocal reports whether Pi treats source as a path (it does unless the
// source names npm, git or a URL).
func IsLocal(source string) bool {
	t := strings.TrimSpace(source)
	for _, p := range []string{"npm:", "git:", "github:", "http:", "https:", "ssh:"} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// ResolveLocal resolves a local source the way Pi does for a user-scope
// package: `~` is home, file:// URLs are paths, and relative paths are
// against the agent dir.
func ResolveLocal(source, agentDir, home string) string {
	p := source
	switch {
	case p == "~":
		return filepath.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case strings.HasPrefix(p, "file://"):
		if u, err := url.Parse(p); err == nil {
			p = u.Path
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(agentDir, p)
}

var npmSpecRE = regexp.MustCompile(`^(@?[^@]+(?:/[^@]+)?)(?:@(.+))?$`)

// ParseNPM splits "npm:name@version" (name may be scoped); ok is false for
// other sources.
func ParseNPM(source string) (name, version string, ok bool) {
	spec, found := strings.CutPrefix(source, "npm:")
	if !found {
		return "", "", false
	}
	spec = strings.TrimSpace(spec)
	m := npmSpecRE.FindStringSubmatch(spec)
	if m == nil {
		return spec, "", true
	}
	return m[1], m[2], true
}

// Where says where the user-scope sources resolve and where piagent keeps
// its extension copies.
type Where struct {
	AgentDir string // Pi's agent dir: relative sources resolve against it
	Home     string
	// ExtensionRoot is ~/.pi/piagent/extension: every folder under it is a
	// copy `piagent extension path` wrote, even one that is gone.
	ExtensionRoot string
}

// Classify names each entry. manifest reads a local package's package.json
// (ok false when there is none); it is the only file access, so a test can
// pass a map.
func Classify(entries []Entry, w Where, manifest func(dir string) (Manifest, bool)) []Package {
	out := make([]Package, 0, len(entries))
	for i, e := range entries {
		p := Package{Entry: e, Index: i, Kind: KindOther}
		if name, ver, ok := ParseNPM(e.Source); ok {
			if name == AdapterName {
				p.Kind, p.Version = KindAdapter, ver
			}
		} else if IsLocal(e.Source) {
			p.Path = ResolveLocal(e.Source, w.AgentDir, w.Home)
			m, ok := manifest(p.Path)
			if ok && m.Name == ExtensionName {
				p.Kind, p.Version = KindExtension, m.Version
			} else if ok && m.Name == AdapterName {
				p.Kind, p.Version = KindAdapter, m.Version // a local copy of the adapter
			} else if w.ExtensionRoot != "" && paths.Within(w.ExtensionRoot, p.Path) && p.Path != w.ExtensionRoot {
				p.Kind, p.Version = KindExtension, filepath.Base(p.Path)
			}
		}
		out = append(out, p)
	}
	return out
}
