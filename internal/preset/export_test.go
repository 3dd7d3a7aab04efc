package preset

import "sort"

// Helpers only the tests use.

// Owned lists, sorted, every server ID some preset owns: the IDs a preset
// may write or, with --replace, restore.
func Owned() []string {
	set := map[string]bool{}
	for _, p := range load().Presets {
		for _, id := range p.Servers {
			set[id] = true
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
