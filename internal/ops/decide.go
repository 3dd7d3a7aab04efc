package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// Decision is what approve or reject recorded (and their --json answer).
type Decision struct {
	Action   string `json:"action"` // "approve" or "reject"
	Server   string `json:"server"`
	Project  string `json:"project"`
	Decision string `json:"decision"` // approval.Approved or approval.Rejected
	Digest   string `json:"digest"`   // of the repository-owned definition
	// ApprovalDigest is what consent covered (approve only): the
	// definition and every pinned file.
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	Store          string `json:"store"`
}

// Preview is the --json answer of approve --dry-run (and of approve
// --tools, which has no decision to name): what consent would cover, and
// the preview a person reads, as the terminal shows it. A client records
// consent to exactly this preview with approve --yes --digest
// ApprovalDigest.
type Preview struct {
	Action         string `json:"action"` // "approve" or "approve-tools"
	Server         string `json:"server"`
	Project        string `json:"project"`
	State          string `json:"state"`
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	DryRun         bool   `json:"dryRun"`
	// Waiting (approve-tools): what the server offers differs from its pin,
	// so there is something to accept; Accepted: it was accepted.
	Waiting  bool   `json:"waiting,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	Preview  string `json:"preview"`
}

// RepositoryServer finds a server a decision may be recorded for: one the
// repository declares, while the approval store can be used. verb names
// the decision in the refusal.
func (o *Ops) RepositoryServer(g *gate.Gate, name, verb string) (*gate.Server, error) {
	s, err := Server(g, name)
	if err != nil {
		return nil, err
	}
	if !s.Repository {
		return nil, refused(fmt.Errorf("%s is not a repository server: it comes from %s, which is your own configuration, so there is nothing to %s",
			name, Display(o.Home, g.View.Cwd, s.Config.Source.File), verb),
			gate.Fix{Text: "servers in your global files need no approval; use", Steps: []gate.Step{{Sub: "disable", Args: name}}, Note: "to stop using it", Quoted: true})
	}
	if g.StoreErr != nil {
		return nil, refused(fmt.Errorf("the approval store cannot be used: %w", g.StoreErr),
			StoreHints(o.ApprovalStore(), g.StoreErr)...)
	}
	return s, nil
}

// Approvable is RepositoryServer for approve: a server whose code cannot
// be pinned is refused before anything is shown.
func (o *Ops) Approvable(g *gate.Gate, name string) (*gate.Server, error) {
	s, err := o.RepositoryServer(g, name, "approve")
	if err != nil {
		return nil, err
	}
	if what := s.TooLarge(); what != "" {
		return nil, refused(fmt.Errorf("not approved: %s cannot be pinned: %s; nothing was recorded", s.Name, what),
			text("give the server a package of its own (a folder with a package.json or pyproject.toml holding its code alone), then approve it"))
	}
	return s, nil
}

// SamePreview refuses consent to s when what the person saw (want, an
// approval digest; "" when none was given) is not what is there now.
func SamePreview(s *gate.Server, want string) error {
	if want != "" && want != s.ApprovalDigest() {
		return refused(fmt.Errorf("not approved: %s changed since the preview you approved (approval digest %s, given %s); nothing was recorded", s.Name, s.ApprovalDigest(), want),
			text("read the definition above, then approve again"))
	}
	return nil
}

// Approve records the person's consent to s as the gate sees it now (what
// a consent records is gate's: Server.Consent), and refreshes the
// launcher's file.
func (o *Ops) Approve(g *gate.Gate, s *gate.Server) (Decision, error) {
	dec := s.Consent(o.now())
	if err := o.Record(g.Project, s.Name, &dec); err != nil {
		return Decision{}, err
	}
	return Decision{Action: "approve", Server: s.Name, Project: g.Project, Decision: dec.Decision, Digest: dec.Digest,
		ApprovalDigest: s.ApprovalDigest(), Store: registry.ApprovalStore(o.Home)}, nil
}

// Reject records that the repository server name must not run in the
// project.
func (o *Ops) Reject(g *gate.Gate, name string) (Decision, error) {
	s, err := o.RepositoryServer(g, name, "reject")
	if err != nil {
		return Decision{}, err
	}
	dec := s.Refusal(o.now())
	if err := o.Record(g.Project, s.Name, &dec); err != nil {
		return Decision{}, err
	}
	return Decision{Action: "reject", Server: s.Name, Project: g.Project, Decision: dec.Decision, Digest: dec.Digest, Store: registry.ApprovalStore(o.Home)}, nil
}

// Reset is what reset dropped (and its --json answer).
type Reset struct {
	Action  string `json:"action"`            // "reset"
	Project string `json:"project,omitempty"` // the project's key; "" for a stale reset
	Server  string `json:"server,omitempty"`  // "" for every decision of the project
	Stale   bool   `json:"stale,omitempty"`
	// Dropped are the projects whose decisions were dropped (with Server,
	// that server's): the project, or none; for a stale reset, every
	// project path that no longer exists.
	Dropped []string `json:"dropped"`
	Store   string   `json:"store"`
}

// Reset forgets the project's decision for server, or every decision of
// the project when server is "".
func (o *Ops) Reset(dir, server string) (Reset, error) {
	project, err := approval.ProjectKey(dir)
	if err != nil {
		return Reset{}, err
	}
	store := o.store()
	found := false
	err = store.Update(func(d *approval.Data) error {
		found = d.Delete(project, server)
		return nil
	})
	if err != nil {
		return Reset{}, refused(fmt.Errorf("cannot reset: %w", err))
	}
	o.RefreshLaunch(project)
	out := Reset{Action: "reset", Project: project, Server: server, Dropped: []string{}, Store: store.Path}
	if found {
		out.Dropped = append(out.Dropped, project)
	}
	return out, nil
}

// ResetStale drops the decisions of every project path that no longer
// exists.
func (o *Ops) ResetStale() (Reset, error) {
	store := o.store()
	var dropped []string
	err := store.Update(func(d *approval.Data) error {
		dropped = d.Stale(func(p string) bool { _, err := os.Stat(p); return err == nil })
		for _, p := range dropped {
			d.Delete(p, "")
		}
		return nil
	})
	if err != nil {
		return Reset{}, refused(fmt.Errorf("cannot reset: %w", err))
	}
	return Reset{Action: "reset", Stale: true, Dropped: append([]string{}, dropped...), Store: store.Path}, nil
}

// Change is what the person approved before, for a server whose
// repository part changed since.
type Change struct {
	DecidedAt string
	// Was is the repository part approved then; nil when the store kept
	// only its digest.
	Was any
	// Diff is a line diff of Was against the repository part now, each as
	// IndentJSON shows it: "- " approved, "+ " now, "  " both.
	Diff []string
}

// Changed reports the approval of s recorded before, when its repository
// part changed since (false: never approved, or unchanged).
func (o *Ops) Changed(g *gate.Gate, s *gate.Server) (Change, bool) {
	data, err := approval.Open(registry.ApprovalStore(o.Home)).Load()
	if err != nil || data == nil {
		return Change{}, false
	}
	prev, ok := data.Get(g.Project, s.Name)
	if !ok || prev.Decision != approval.Approved || prev.Digest == s.Digest {
		return Change{}, false
	}
	c := Change{DecidedAt: prev.DecidedAt}
	if len(prev.Definition) == 0 {
		return c, true
	}
	if json.Unmarshal(prev.Definition, &c.Was) != nil {
		return Change{}, false
	}
	c.Diff = lineDiff(strings.Split(IndentJSON(c.Was), "\n"), strings.Split(IndentJSON(s.Owned()), "\n"))
	return c, true
}

// IndentJSON is a definition as a person reads it: indented JSON, two
// spaces in.
func IndentJSON(v any) string {
	b, _ := json.MarshalIndent(v, "  ", "  ")
	return "  " + strings.TrimSpace(string(b))
}

// lineDiff is a line diff of a and b by their longest common subsequence:
// "- " for a line only in a, "+ " only in b, "  " for both. Definitions are
// short, so the quadratic table is fine.
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}

func (o *Ops) store() *approval.Store {
	store := approval.Open(o.ApprovalStore())
	store.Waiting = o.waiting("the approval store")
	return store
}

// Record writes one decision (nil deletes it) under the store's lock, and
// refreshes the launcher's file.
func (o *Ops) Record(project, name string, dec *approval.Decision) error {
	if err := o.StoreDecision(project, name, dec); err != nil {
		return err
	}
	o.RefreshLaunch(project)
	return nil
}

// StoreDecision sets dec (or, nil, deletes the decision) in the approval
// store, keeping the person's switch: approving or rejecting a server
// never switches it back on.
func (o *Ops) StoreDecision(project, name string, dec *approval.Decision) error {
	store := o.store()
	err := store.Update(func(d *approval.Data) error {
		if dec == nil {
			d.Delete(project, name)
			return nil
		}
		next := *dec
		if old, ok := d.Get(project, name); ok && old.Off {
			next.Off = true
		}
		d.Set(project, name, next)
		return nil
	})
	if err != nil {
		return refused(fmt.Errorf("cannot record the decision: %w", err), StoreHints(store.Path, err)...)
	}
	return nil
}

// ApprovalStore is the person's approval store (registry.ApprovalStore).
func (o *Ops) ApprovalStore() string { return registry.ApprovalStore(o.Home) }

// StoreHints names the fix for an approval store (at path) that cannot be
// used or written: the owner or mode to restore for one that is not the
// person's alone, space for a full disk, and repair for a broken one.
func StoreHints(path string, err error) []gate.Fix {
	var ue *safefile.UnsafeError
	var le *atomicfile.LockedError
	switch {
	case errors.As(err, &le):
		return texts("another command holds " + path + " (" + le.Holder + "): nothing was changed; run this again when it is done, or end that process if it is stuck")
	case errors.As(err, &ue):
		return texts(ue.Fix, "piagent trusts only a store that is yours alone (OpenSSH's StrictModes rule); nothing was changed")
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return nil // the edge's file-system hints word these
	}
	return texts("repair or move " + path + "; piagent never overwrites a store it cannot read")
}
