package setup

// Helpers only the tests use.

// Apply is the package list after the plan's actions, as Pi would leave it:
// a removal drops the matching source, an install replaces a matching source
// in place or appends. Matching is Pi's: npm sources by package name, local
// ones by resolved path. It lets a test, and a dry run, see the end state.
func Apply(pkgs []Package, actions []Action, w Where, manifest func(dir string) (Manifest, bool)) []Package {
	entries := make([]Entry, 0, len(pkgs))
	for _, p := range pkgs {
		entries = append(entries, p.Entry)
	}
	key := func(source string) string {
		if name, _, ok := ParseNPM(source); ok {
			return "npm:" + name
		}
		if IsLocal(source) {
			return "local:" + ResolveLocal(source, w.AgentDir, w.Home)
		}
		return source
	}
	for _, a := range actions {
		k := key(a.Source)
		i := -1
		for j, e := range entries {
			if key(e.Source) == k {
				i = j
				break
			}
		}
		switch a.Op {
		case OpRemove:
			if i >= 0 {
				entries = append(entries[:i], entries[i+1:]...)
			}
		case OpInstall:
			if i >= 0 {
				entries[i].Source = a.Source
			} else {
				entries = append(entries, Entry{Source: a.Source})
			}
		}
	}
	return Classify(entries, w, manifest)
}
