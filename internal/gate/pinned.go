package gate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/digest"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/secret"
)

// lockfiles are pinned beside a local package's package.json.
var lockfiles = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "bun.lock"}

// pinned lists the project files a definition runs: the command, an argument
// or the cwd when it resolves to a file inside the project, and for a local
// package its package.json and lockfile. Only the target itself is pinned,
// not what it imports.
func (in *Input) pinned(e mcpconfig.Entry) []PinnedFile {
	project := in.View.Cwd
	base := in.baseDir(e)
	var found []string
	consider := func(s string, isCommand bool) {
		if s == "" || strings.Contains(s, "://") || len(secret.References(s)) > 0 || strings.HasPrefix(s, "!") {
			return
		}
		if isCommand && !strings.Contains(s, "/") {
			return // found on PATH, outside the project
		}
		p := paths.Expand(in.View.Home, s)
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		p = filepath.Clean(p)
		if !paths.Within(project, p) || p == project {
			return
		}
		fi, err := in.FS.Stat(p)
		if err != nil {
			return
		}
		if fi.IsDir() {
			found = append(found, in.packageFiles(p)...)
			return
		}
		found = append(found, p)
	}
	if cmd, ok := e["command"].(string); ok {
		consider(cmd, true)
	}
	if args, ok := e["args"].([]any); ok {
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				continue
			}
			if strings.HasPrefix(s, "-") {
				if _, v, ok := strings.Cut(s, "="); ok {
					consider(v, false)
				}
				continue
			}
			consider(s, false)
		}
	}
	if base != project && paths.Within(project, base) {
		found = append(found, in.packageFiles(base)...)
	}
	slices.Sort(found)
	found = slices.Compact(found)
	out := make([]PinnedFile, 0, len(found))
	for _, p := range found {
		rel, _ := filepath.Rel(project, p)
		pf := PinnedFile{Path: filepath.ToSlash(rel)}
		if data, err := in.FS.ReadFile(p); err == nil {
			pf.Digest = digest.Bytes(data)
		}
		out = append(out, pf)
	}
	return out
}

func (in *Input) packageFiles(dir string) []string {
	manifest := filepath.Join(dir, "package.json")
	if fi, err := in.FS.Stat(manifest); err != nil || fi.IsDir() {
		return nil
	}
	out := []string{manifest}
	for _, l := range lockfiles {
		p := filepath.Join(dir, l)
		if fi, err := in.FS.Stat(p); err == nil && !fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// PinnedPaths returns the absolute paths of every file the gate pinned, for
// the cache signature.
func (g *Gate) PinnedPaths() []string {
	var out []string
	for _, s := range g.Servers {
		for _, p := range s.Pinned {
			out = append(out, filepath.Join(g.View.Cwd, filepath.FromSlash(p.Path)))
		}
	}
	return out
}
