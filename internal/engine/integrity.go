package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/paths"
)

// integrity watches the paths inside the project that decide what Pi loads
// or git runs (baseline.Roots: the project's Pi folder, and .git's hooks,
// config, commondir, info and worktrees when the project has a .git). The
// sandbox cannot always keep a command from creating or changing them (a
// writable project, no mount namespace, a folder that did not exist yet).
// Their state before the session is the launcher's baseline (taken before
// Pi and any server started), or under a plain pi the state at the
// session's first request. A change seen here is put back from that
// baseline, what was there moved to a quarantine folder (nothing is
// deleted), and every further tool call of the session is blocked until a
// person has looked. MCP files are left out: the gate already treats
// whatever appears in them as unapproved.
type integrity struct {
	home  string
	base  *baseline.Snapshot
	since string         // where the baseline comes from, for the notice
	watch *fswatch.Watch // nil: compare on every call
	// tripped are the roots changed during the session; quarantines the
	// restores made. Once tripped, the session stays blocked.
	tripped     []string
	quarantines []string
	failed      string // a comparison or restore that could not be done
	// roots are the watched paths, absolute: an event on anything else in
	// their folders (a write of README.md beside .pi, of .git/index beside
	// .git/hooks) needs no comparison (issue 46: the answer after an edit)
	roots []string
	// compared is the last comparison; zero, the first call compares
	// whatever the watch says (the launcher's baseline is older than it)
	compared time.Time
	// nested: the repositories in the work tree git enters from the
	// project, looked at on every call (nested.go)
	nested *nested
	// drains counts the drains that found events (Engine.Drained)
	drains atomic.Int64
}

// recheck is how long the watch's silence is trusted alone: inotify does
// not see every change (a write through a hard link made outside the
// watched folders, through a shared mapping), so past it the next call
// compares anyway, as the gate's cache does.
var recheck = 5 * time.Second

// compares counts the comparisons with the baseline (tests).
var compares atomic.Int64

func newIntegrity(hub *fswatch.Hub, home, project, configDir, launched string) *integrity {
	in := &integrity{home: home}
	roots := baseline.Roots(home, project, configDir)
	if launched != "" {
		s, err := baseline.Load(home, launched)
		switch {
		case err != nil:
			in.since = "the session's first request (the launcher's baseline could not be read: " + err.Error() + ")"
		case s.Project != project:
			in.since = "the session's first request (the launcher's baseline is of " + s.Project + ")"
		default:
			in.base, in.since = s, "the launcher's start"
			roots = s.Roots
		}
	} else {
		in.since = "the session's first request (Pi was not started by piagent pi)"
	}
	// Watch the folders holding each root (creation, removal, rename) and
	// each existing tree beneath them, before reading the state, so that no
	// change falls between the two.
	var trees, parents []string
	for _, r := range roots {
		p := filepath.Join(project, filepath.FromSlash(r))
		trees = append(trees, p)
		parents = append(parents, filepath.Dir(p))
	}
	in.roots = trees
	in.watch = watchFolders(hub, trees, parents)
	if in.base == nil {
		s, err := baseline.Take(project, roots)
		if err != nil {
			in.failed = err.Error()
			s = &baseline.Snapshot{Project: project, Roots: roots}
		}
		in.base = s
	}
	// a second's margin: a change's ctime comes from the kernel's coarse
	// clock, which may read a little behind the one that took the baseline
	in.nested = newNested(project, in.base.Taken.Add(-time.Second))
	return in
}

// changed lists the roots changed since the baseline during this session,
// after putting them back.
func (in *integrity) changed() []string {
	if in.failed == "" {
		in.checkNested()
	}
	if in.watch != nil && in.failed == "" {
		changed, _, lost, names := in.watch.Drain()
		if changed {
			in.drains.Add(1)
		}
		quiet := !changed || !lost && !in.touches(names) && !in.watch.HardLinked(names)
		if quiet && time.Since(in.compared) < recheck {
			return in.tripped
		}
	}
	in.compared = time.Now()
	compares.Add(1)
	if in.failed != "" {
		return []string{in.failed}
	}
	changes, err := baseline.Compare(in.base)
	if err != nil {
		in.failed = "cannot compare with the session's start: " + err.Error()
		return []string{in.failed}
	}
	if len(changes) == 0 {
		return in.tripped
	}
	for _, r := range baseline.ChangedRoots(in.base, changes) {
		if !slices.Contains(in.tripped, r) {
			in.tripped = append(in.tripped, r)
		}
	}
	slices.Sort(in.tripped)
	q, err := baseline.Restore(in.home, in.base, changes, baseline.DuringSession)
	if q != nil {
		in.quarantines = append(in.quarantines, q.ID)
	}
	if err != nil {
		in.failed = "cannot put the changed files back: " + err.Error()
	}
	return in.tripped
}

// checkNested moves what a command changed in a nested repository git
// enters from the project (a config with core.fsmonitor, say) to a
// quarantine, and trips the watch with it.
func (in *integrity) checkNested() {
	risks, why := in.nested.risks()
	if why != "" {
		in.failed = why
		return
	}
	if len(risks) == 0 {
		return
	}
	changes := make([]baseline.Change, len(risks))
	for i, r := range risks {
		changes[i] = baseline.Change{Path: r.Path, What: "added"}
		trip := r.Path + " (" + r.Why + ", in a repository git enters from the project)"
		if !slices.Contains(in.tripped, trip) {
			in.tripped = append(in.tripped, trip)
		}
	}
	slices.Sort(in.tripped)
	q, err := baseline.Restore(in.home, &baseline.Snapshot{Project: in.base.Project}, changes, baseline.DuringSession)
	if q != nil {
		in.quarantines = append(in.quarantines, q.ID)
	}
	if err != nil {
		in.failed = "cannot move the nested repository's settings to the quarantine: " + err.Error()
	}
}

// touches reports whether an event named by the watch can be about a
// root: the root, a path inside it, or a folder on the way to it (an event
// on a watched folder itself).
func (in *integrity) touches(names []string) bool {
	for _, n := range names {
		for _, r := range in.roots {
			if paths.Within(r, n) || paths.Within(n, r) {
				return true
			}
		}
	}
	return false
}

// reason is the block's text for a tripped watch.
func (in *integrity) reason(changed []string) string {
	msg := fmt.Sprintf("blocked: %s changed during this session; files there decide what Pi loads or what git runs, and an agent's command may have written them", strings.Join(changed, ", "))
	if len(in.quarantines) > 0 {
		last := in.quarantines[len(in.quarantines)-1]
		msg += fmt.Sprintf("; piagent put back what was there at %s and moved what it found to %s (an edit made outside Pi may be among it): 'piagent quarantine show %s' lists it, 'piagent quarantine accept %s' puts it back if it was yours, 'piagent quarantine discard %s' drops it",
			in.since, baseline.Folder(in.home, last), last, last, last)
	}
	if in.failed != "" && !slices.Contains(changed, in.failed) {
		msg += "; " + in.failed + ": look at the change yourself (git status, ls -la) and undo what you did not make"
	}
	return msg + "; then start a new session"
}

// watchFolders watches the folders holding each path in parents and every
// folder of each tree; nil when there is no watch to be had, and then every
// call compares.
func watchFolders(hub *fswatch.Hub, trees, parents []string) *fswatch.Watch {
	w := hub.Watch()
	if w == nil {
		return nil
	}
	for _, p := range parents {
		if err := w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			w.Close()
			return nil
		}
	}
	for _, t := range trees {
		w.AddTree(t)
	}
	return w
}
