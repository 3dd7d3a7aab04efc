package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/paths"
)

// stores are the raw path patterns LoadSettings keeps for SecretStores: a
// policy built by Merge has them compiled in protected and allowRead.
type stores struct{ protected, readable []string }

// baseStores are the base policy's protectedPaths and allowReadPaths,
// generated into stores_base.go (TestBaseStoresCurrent holds them to the
// file): parsing the whole base file for them would cost every sandboxed
// command half a millisecond.
func baseStores() stores { return stores{protected: baseProtected, readable: baseReadable} }

// applyStores lays a file's protected and readable paths over s as Merge
// does: a repository adds protected paths, never readable ones, and
// removes nothing.
func (s *stores) apply(f *File, proj bool) {
	for _, pat := range f.ProtectedPaths {
		if !slices.Contains(s.protected, pat) {
			s.protected = append(s.protected, pat)
		}
	}
	if proj {
		return
	}
	s.readable = append(s.readable, f.AllowReadPaths...)
	if f.Remove != nil {
		s.protected = slices.DeleteFunc(s.protected, func(p string) bool { return slices.Contains(f.Remove.ProtectedPaths, p) })
	}
}

// SecretStores are the paths of this machine that the policy keeps from
// every tool, reading as well as writing, for a sandbox to hide from the
// commands it confines: each protectedPaths pattern anchored at the home
// (~/.ssh/**, ~/.git-credentials) or at the root (/etc/shadow), and each
// bare file name (.npmrc) at the home's top, that allowReadPaths leaves
// unreadable. They are absolute and clean, files and folders alike, and
// need not exist.
//
// A folder some of whose contents allowReadPaths makes readable
// (~/.config/git: its config is readable, its credentials are not) is not
// hidden whole: what it holds now that no readable pattern names is. A
// pattern with a wildcard before a final "/**" (/proc/*/environ) names no
// path a sandbox could hide; the guard alone holds it.
//
// partial are those folders of the partly readable kind (~/.config/git,
// ~/.config/fish) as paths: a sandbox keeps readable only what they hold
// at a command's start, for a file that appears there later (a first
// credentials, fish_variables) is one no readable pattern may name.
func (p *Policy) SecretStores(home string) (out, partial []string) {
	s := stores{protected: patterns(p.protected), readable: patterns(p.allowRead)}
	if p.stores != nil {
		s = *p.stores
	}
	add := func(path string) {
		if !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	for _, pat := range s.protected {
		if slices.Contains(s.readable, pat) {
			continue
		}
		path, dir, ok := literal(pat, home)
		if !ok {
			continue
		}
		// The readable patterns at or beneath it, written from the same
		// anchor (an any-depth readable name is not looked for here: a
		// store hidden whole is the safe side).
		prefix := strings.TrimSuffix(pat, "/**")
		var within []string
		for _, r := range s.readable {
			// patterns, "/" on every system: not paths.Within's paths
			if rest, ok := strings.CutPrefix(r, prefix); ok && (rest == "" || rest[0] == '/') {
				within = append(within, r)
			}
		}
		switch {
		case len(within) == 0:
			add(path)
		case !dir || slices.Contains(within, prefix+"/**"):
			// a file made readable, or all of the folder
		default:
			partial = append(partial, path)
			for _, c := range unreadableChildren(path, home, within) {
				add(c)
			}
		}
	}
	// A store within another (~/.kube/config in ~/.kube) is hidden with it.
	return slices.DeleteFunc(out, func(x string) bool {
		return slices.ContainsFunc(out, func(d string) bool { return d != x && paths.Within(d, x) })
	}), partial
}

// literal is the path pattern pat names without a wildcard, and whether it
// is a folder and all beneath it (a final "/**"); ok is false for a
// pattern that names no one path of this machine.
func literal(pat, home string) (path string, dir, ok bool) {
	rest, dir := strings.CutSuffix(pat, "/**")
	if strings.ContainsAny(rest, "*?[{\\") || rest == "" {
		return "", false, false
	}
	switch {
	case strings.HasPrefix(rest, "~/"):
		if home == "" {
			return "", false, false
		}
		return filepath.Join(home, rest[2:]), dir, true
	case strings.HasPrefix(rest, "/"):
		return filepath.Clean(rest), dir, true
	case !dir && !strings.Contains(rest, "/"):
		if home == "" {
			return "", false, false
		}
		return filepath.Join(home, rest), false, true
	}
	return "", false, false
}

// unreadableChildren are the entries of folder dir that none of the
// readable patterns matches, as paths.
func unreadableChildren(dir, home string, readable []string) []string {
	names := listDir(dir)
	if len(names) == 0 {
		return nil
	}
	var gs []glob
	for _, r := range readable {
		g, err := compileGlobs(r)
		if err != nil {
			continue
		}
		gs = append(gs, g...)
	}
	homeSegs := splitPath(strings.ToLower(filepath.ToSlash(home)))
	var out []string
	for _, name := range names {
		child := filepath.Join(dir, name)
		segs := splitPath(strings.ToLower(filepath.ToSlash(child)))
		if !slices.ContainsFunc(gs, func(g glob) bool { return g.matchPath(segs, homeSegs) }) {
			out = append(out, child)
		}
	}
	return out
}
