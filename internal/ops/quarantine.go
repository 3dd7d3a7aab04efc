package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/baseline"
)

// Quarantine is what piagent put back after a session, and where what it
// found is kept.
type Quarantine = baseline.Quarantine

// Snapshot is the record of a project's git and Pi files before a session.
type Snapshot = baseline.Snapshot

// EnvBaseline names the variable the launcher passes the session's
// baseline file in, for the helper.
const EnvBaseline = baseline.EnvBaseline

// ChangedPaths are the paths a quarantine holds.
func ChangedPaths(q *Quarantine) []string {
	var out []string
	for _, k := range q.Changes {
		out = append(out, k.Path)
	}
	return out
}

// QuarantineFolder is where a quarantine's files are.
func (o *Ops) QuarantineFolder(id string) string { return baseline.Folder(o.Home, id) }

// TakeBaseline records the project's git and Pi files before a session
// (configDir is the project's Pi folder's name) and returns the record and
// the file it is saved in. It first finishes what an earlier launcher in
// this project could not (killed before Pi exited: its changes are put
// back now), then refuses while a quarantine of the project is unexamined.
func (o *Ops) TakeBaseline(dir, configDir string) (*Snapshot, string, error) {
	home := o.Home
	unfinished, err := baseline.Unfinished(home, dir)
	if err != nil {
		return nil, "", refused(fmt.Errorf("cannot read the baselines of earlier sessions: %w", err))
	}
	for _, p := range unfinished {
		if s, err := baseline.Load(home, p); err == nil {
			if ch, err := baseline.Compare(s); err == nil && len(ch) > 0 {
				if _, err := baseline.Restore(home, s, ch, baseline.AfterCrash); err != nil {
					o.warn(err)
				}
			}
		}
		os.Remove(p)
	}
	pending, err := baseline.Pending(home, dir)
	if err != nil {
		return nil, "", refused(fmt.Errorf("cannot read piagent's quarantines: %w", err))
	}
	if len(pending) > 0 {
		q := pending[0]
		what := strings.Join(ChangedPaths(q), ", ")
		if what == "" {
			what = "an unreadable record"
		}
		return nil, "", refused(fmt.Errorf("not starting Pi: files that decide what git runs or what Pi loads changed in this project %s, and piagent put back the earlier version; what it found (%s) is in quarantine %s, which nobody has looked at yet", q.Source, what, q.ID),
			texts("look: piagent quarantine show "+q.ID+" (or piagent mcp doctor --json)",
				"then, if the change was yours (an edit made outside Pi): piagent quarantine accept "+q.ID,
				"if it was not: piagent quarantine discard "+q.ID)...)
	}
	s, err := baseline.Take(dir, baseline.Roots(home, dir, configDir))
	if err != nil {
		return nil, "", refused(fmt.Errorf("cannot record the project's git and Pi files before Pi starts: %w", err))
	}
	p, err := baseline.Save(home, s)
	if err != nil {
		return nil, "", refused(fmt.Errorf("cannot save the project's baseline: %w", err))
	}
	return s, p, nil
}

// AfterSession compares the project's git and Pi files with the session's
// baseline (saved in file) once Pi has exited, puts back what changed (the
// agent's last command, a server's exit, or anything the helper did not
// see), and answers the quarantines the session made. err says the
// comparison could not be made (the person then looks themselves).
func (o *Ops) AfterSession(dir string, s *Snapshot, file string, start time.Time) (made []*Quarantine, err error) {
	defer os.Remove(file)
	ch, err := baseline.Compare(s)
	if err == nil && len(ch) > 0 {
		if _, rerr := baseline.Restore(o.Home, s, ch, baseline.AfterExit); rerr != nil {
			o.warn(rerr)
		}
	}
	// a repository nested in the project with a setting made during the
	// session (a server's last act, say) that the person's next git
	// status would run
	if _, nerr := baseline.RestoreNested(o.Home, s.Project, s.Taken.Add(-time.Second), baseline.AfterExit); nerr != nil {
		o.warn(fmt.Errorf("%w; look at the repositories nested in the project yourself (git submodule status)", nerr))
	}
	pending, _ := baseline.Pending(o.Home, dir)
	for _, q := range pending {
		if !q.When.Before(start.Add(-time.Second)) {
			made = append(made, q)
		}
	}
	return made, err
}

var errUnreadableQuarantine = errors.New("unreadable quarantine record")

// Quarantines are every quarantine, unexamined first.
func (o *Ops) Quarantines() ([]*Quarantine, error) { return baseline.List(o.Home) }

// ReadQuarantine reads one quarantine, or says how to find the right ID.
func (o *Ops) ReadQuarantine(id string) (*Quarantine, error) {
	if _, err := os.Lstat(baseline.Folder(o.Home, id)); err != nil || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, &Error{Kind: Usage, Err: fmt.Errorf("no quarantine %q", id), Hints: texts("'piagent quarantine list' shows every quarantine")}
	}
	q, err := baseline.Read(o.Home, id)
	if err != nil {
		return nil, refused(fmt.Errorf("%w: %v", errUnreadableQuarantine, err),
			text("look in "+baseline.Folder(o.Home, id)+" yourself, then 'piagent quarantine discard "+id+"'"))
	}
	return q, nil
}

// AcceptQuarantine puts what quarantine id holds back in place (the change
// was the person's), keeping what it replaced; it answers the quarantine
// and where what was replaced is.
func (o *Ops) AcceptQuarantine(id string) (*Quarantine, string, error) {
	if _, err := o.ReadQuarantine(id); err != nil {
		return nil, "", err
	}
	q, err := baseline.Accept(o.Home, id)
	if err != nil {
		return nil, "", refused(fmt.Errorf("cannot accept quarantine %s: %w", id, err),
			text("'piagent quarantine show "+id+"' says where its files are; move them by hand and then 'piagent quarantine discard "+id+"'"))
	}
	return q, filepath.Join(baseline.Folder(o.Home, q.ID), "replaced"), nil
}

// DiscardQuarantine removes quarantine id and what it holds (the change
// was not the person's); an unreadable record may be discarded too.
func (o *Ops) DiscardQuarantine(id string) error {
	if _, err := o.ReadQuarantine(id); err != nil && !errors.Is(err, errUnreadableQuarantine) {
		return err
	}
	if err := baseline.Discard(o.Home, id); err != nil {
		return refused(err)
	}
	return nil
}
