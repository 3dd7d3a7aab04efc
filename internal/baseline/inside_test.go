package baseline

import (
	"strings"
	"testing"
)

// TestInside: baseline's project-relative containment is paths.Within (at
// or below a root, ChangedRoots) and below (strictly under, Compare's whole
// subtrees and restore's folder brought back), with the answers of the
// hand-written tests they replaced: p == r || HasPrefix(p, r+"/") and
// HasPrefix(p, r+"/"). Those differ from Within only for the roots "" and
// "/", which a snapshot never holds (its roots and entries are relative and
// clean).
func TestInside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p       string
		within, below bool
	}{
		{".pi", ".pi", true, false},                 // the same path
		{".pi", ".pi/settings.json", true, true},    // a child
		{".pi", ".pi/a/b", true, true},              // deeper
		{".pi", ".pie", false, false},               // a prefix, not a child
		{".pi", ".pi-x/y", false, false},            // a prefix, not a child
		{".git/hooks", ".git/hooksx", false, false}, // a prefix, not a child
		{".git/hooks", ".git", false, false},        // the parent
		{".pi", ".pi/", true, true},                 // a trailing slash on the path
		{".pi/", ".pi/x", false, false},             // a trailing slash on the root
		{"a/b", "a/b/c", true, true},                // relative, two segments
		{"a/b", "x/a/b/c", false, false},            // the root elsewhere in the path
		{".git/worktrees", ".git/worktrees/w/HEAD", true, true},
	} {
		old := tc.p == tc.root || strings.HasPrefix(tc.p, tc.root+"/")
		oldBelow := strings.HasPrefix(tc.p, tc.root+"/")
		s := &Snapshot{Project: "/proj", Roots: []string{tc.root}}
		gotWithin := len(ChangedRoots(s, []Change{{Path: tc.p, What: "changed"}})) == 1
		if gotWithin != tc.within || old != tc.within {
			t.Errorf("%q at or below %q: ChangedRoots says %v, the old test %v, want %v", tc.p, tc.root, gotWithin, old, tc.within)
		}
		if got := below(tc.root, tc.p); got != tc.below || oldBelow != tc.below {
			t.Errorf("%q below %q: %v, the old test %v, want %v", tc.p, tc.root, got, oldBelow, tc.below)
		}
	}
}
