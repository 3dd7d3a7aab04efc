// Package baseline keeps what the files inside a project that decide what
// Pi loads or what git runs looked like before a session (the project's Pi
// folder, .git/hooks, .git/config, .git/commondir, .git/info,
// .git/worktrees), finds what changed since, and puts it back: what is there
// now is moved to a quarantine folder under ~/.pi/piagent, never deleted,
// and the version from the session's start is written in its place.
//
// The launcher (piagent pi) takes the baseline before Pi and any server
// starts and keeps it in piagent's own folder for the helper
// (EnvBaseline); under a plain pi the helper takes it at the session's
// first request. Both the helper, at the first call after a change, and
// the launcher, when Pi exits, restore; the launcher refuses to start Pi in
// a project while a quarantine of it has not been examined.
package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// EnvBaseline names the baseline file the launcher took for the session.
const EnvBaseline = "PIAGENT_BASELINE"

// Bounds: past them a change is still seen (by the stamps) but the older
// version cannot be put back, and the quarantine's record says so.
const (
	maxEntries = 5000    // entries walked under the roots
	maxKept    = 1 << 20 // a file's content kept for restoring
	maxTotal   = 16 << 20
)

// Roots are the paths inside project, relative and slash-separated, that
// the baseline covers: the project's Pi folder (configDir, ".pi" unless Pi
// is rebranded) and, when the project has a .git folder, what the next git
// command reads that the sandbox cannot always keep read-only (it may not
// exist yet, or there is no mount namespace), the hooks folder
// core.hooksPath names inside the project among them (husky's .husky), and
// a file of the work tree git's config includes; and the other coding
// tools' files that run programs when the person opens the project with
// them (registry.OtherTools).
func Roots(home, project, configDir string) []string {
	roots := []string{filepath.ToSlash(configDir)}
	inside := func(entries []registry.Entry) {
		for _, e := range entries {
			if rel, err := filepath.Rel(project, e.Path); err == nil && e.Path != project && paths.Within(project, e.Path) {
				roots = append(roots, filepath.ToSlash(rel))
			}
		}
	}
	// git's folders inside the project (.git, or the one a .git file
	// names), and what git reads from the work tree (hooks folders,
	// included configs, hook managers' configurations, the .git file)
	inside(registry.GitFolders(project))
	inside(registry.GitPaths(home, project))
	// last: a large .claude folder may fill the walk's bound (Partial),
	// and git's files go first
	inside(registry.OtherTools(project))
	// a root the person made a link: the links on its way and what it
	// leads to, inside the project, are watched too (the sandbox locks
	// that end, not the link, which a command could re-point)
	for _, r := range roots[1:] {
		links, end := wayOf(filepath.Join(project, filepath.FromSlash(r)))
		if len(links) == 0 {
			continue
		}
		for _, p := range append(links, end) {
			if rel, err := filepath.Rel(project, p); err == nil && p != "" && p != project && paths.Within(project, p) {
				roots = append(roots, filepath.ToSlash(rel))
			}
		}
	}
	// in order (the walk's bound falls on the last), once each
	seen := map[string]bool{}
	return slices.DeleteFunc(roots, func(r string) bool {
		dup := seen[r]
		seen[r] = true
		return dup
	})
}

// wayOf resolves p as the kernel would and returns the symbolic links met
// on the way (p's own last component among them), and where it ends; a
// missing component is kept as written. No links: nil and p.
func wayOf(p string) (links []string, end string) {
	rest := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	cur := "/"
	for n := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		t, err := os.Readlink(next)
		if n++; err != nil || n > 40 {
			return links, ""
		}
		links = append(links, next)
		if filepath.IsAbs(t) {
			cur = "/"
		}
		rest = append(strings.Split(filepath.ToSlash(t), "/"), rest...)
	}
	return links, cur
}

// skipped are paths in the project's Pi folder that the adapter or a
// person's own /piagent-mcp command write during a session; the gate
// covers what they mean.
var skipped = []string{"mcp.json", "mcp-traces"}

// Stamp is what a stat said of an entry; equal stamps mean unchanged (a
// change time cannot be set back by a user).
type Stamp struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
}

// Entry is one file, folder or link under a root.
type Entry struct {
	Path   string `json:"path"` // relative to the project, slash-separated
	Kind   string `json:"kind"` // "file", "dir", "link" or "other"
	Mode   uint32 `json:"mode"` // permission, setuid, setgid and sticky bits
	Stamp  Stamp  `json:"stamp"`
	Sum    string `json:"sha256,omitempty"` // a file's content, up to maxKept
	Data   []byte `json:"data,omitempty"`   // a file's content, kept for restoring
	Target string `json:"target,omitempty"` // a link's
}

// Snapshot is the state of a project's roots.
type Snapshot struct {
	Version int       `json:"version"`
	Project string    `json:"project"`
	Roots   []string  `json:"roots"`
	Taken   time.Time `json:"taken"`
	// Session and Start identify the launcher that took it (its process
	// and that process's start time): a file whose launcher is gone is an
	// unfinished session (Unfinished).
	Session int     `json:"pid,omitempty"`
	Start   uint64  `json:"start,omitempty"`
	Entries []Entry `json:"entries"`
	// Partial: more entries than the bound; those past it are not compared.
	Partial bool `json:"partial,omitempty"`
}

func (s *Snapshot) index() map[string]*Entry {
	m := make(map[string]*Entry, len(s.Entries))
	for i := range s.Entries {
		m[s.Entries[i].Path] = &s.Entries[i]
	}
	return m
}

// Take records the roots of project, with the content of each file (up to
// the bounds) so that it can be put back.
func Take(project string, roots []string) (*Snapshot, error) {
	return take(project, roots, nil)
}

// take walks the roots without following links. With prev it is a
// comparison's walk: a file whose stamp equals prev's is not read again,
// and no content is kept.
func take(project string, roots []string, prev map[string]*Entry) (*Snapshot, error) {
	if !filepath.IsAbs(project) {
		return nil, fmt.Errorf("baseline: project %q is not an absolute path", project)
	}
	s := &Snapshot{Version: 1, Project: project, Roots: roots, Taken: time.Now()}
	total := 0
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join(project, filepath.FromSlash(root)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					// a folder that cannot be read: its entry is recorded,
					// its content is not; a root under a file (.git/… where
					// .git is a linked work tree's file) is as absent
					return nil
				}
				return fmt.Errorf("baseline: %w", err)
			}
			rel, _ := filepath.Rel(project, p)
			rel = filepath.ToSlash(rel)
			if root == roots[0] && rel != root {
				if slices.Contains(skipped, strings.SplitN(strings.TrimPrefix(rel, root+"/"), "/", 2)[0]) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
			}
			// the bound is on what lies below the roots: each root's own
			// entry is recorded whatever came before it (a large .opencode
			// must not hide a .devcontainer link or a hooks file after it)
			if len(s.Entries) >= maxEntries && rel != root {
				s.Partial = true
				return filepath.SkipAll
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return fmt.Errorf("baseline: %w", err)
			}
			e := entryOf(rel, fi)
			switch e.Kind {
			case "link":
				e.Target, _ = os.Readlink(p)
			case "file":
				if old := prev[rel]; old != nil && old.Kind == "file" && old.Stamp == e.Stamp {
					e.Sum = old.Sum
					break
				}
				if fi.Size() <= maxKept {
					data, err := readNoFollow(p)
					if err != nil {
						e.Sum = "unreadable"
						break
					}
					sum := sha256.Sum256(data)
					e.Sum = hex.EncodeToString(sum[:])
					if prev == nil && total+len(data) <= maxTotal {
						e.Data = data
						if e.Data == nil {
							e.Data = []byte{}
						}
						total += len(data)
					}
				}
			}
			s.Entries = append(s.Entries, e)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func entryOf(rel string, fi fs.FileInfo) Entry {
	st := safefile.FromInfo(fi)
	e := Entry{Path: rel, Mode: uint32(fi.Mode().Perm()),
		Stamp: Stamp{Size: st.Size, Mtime: st.Mtime, Ctime: st.Ctime, Dev: st.Dev, Ino: st.Ino}}
	if fi.Mode()&fs.ModeSetuid != 0 {
		e.Mode |= syscall.S_ISUID
	}
	if fi.Mode()&fs.ModeSetgid != 0 {
		e.Mode |= syscall.S_ISGID
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		e.Mode |= syscall.S_ISVTX
	}
	switch {
	case fi.Mode().IsRegular():
		e.Kind = "file"
	case fi.IsDir():
		e.Kind = "dir"
		e.Stamp = Stamp{} // a folder's times change with every entry written in it
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Kind = "link"
	default:
		e.Kind = "other"
	}
	return e
}

func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, maxKept+1))
}

// Change is one path that differs from the baseline.
type Change struct {
	Path string `json:"path"`
	What string `json:"change"` // "added", "removed" or "changed"
}

// Compare walks the roots again and lists what differs from s, parents
// before children: a file whose stamp changed but whose content and mode
// did not is unchanged.
func Compare(s *Snapshot) ([]Change, error) {
	base := s.index()
	now, err := take(s.Project, s.Roots, base)
	if err != nil {
		return nil, err
	}
	var out []Change
	seen := make(map[string]bool, len(now.Entries))
	// a root's own entry is in both walks, past the bound too (take)
	isRoot := func(p string) bool { return slices.Contains(s.Roots, p) }
	for i := range now.Entries {
		e := &now.Entries[i]
		seen[e.Path] = true
		switch b := base[e.Path]; {
		case b == nil:
			if !s.Partial || isRoot(e.Path) {
				out = append(out, Change{e.Path, "added"})
			}
		case !same(b, e):
			out = append(out, Change{e.Path, "changed"})
		}
	}
	for _, b := range s.Entries {
		if !seen[b.Path] && (!now.Partial || isRoot(b.Path)) {
			out = append(out, Change{b.Path, "removed"})
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	// below a path that was added, removed or changed kind, the whole
	// subtree goes with it
	var top []Change
	var wholes []string
	nowIdx := now.index()
	for _, c := range out {
		if slices.ContainsFunc(wholes, func(w string) bool { return below(w, c.Path) }) {
			continue
		}
		top = append(top, c)
		if whole(c, base, nowIdx) {
			wholes = append(wholes, c.Path)
		}
	}
	return top, nil
}

// below: p, a project-relative path, lies under root and is not root
// itself.
func below(root, p string) bool { return p != root && paths.Within(root, p) }

// whole: a change that moves the entry's whole subtree (an added or
// removed folder, or one that is no longer a folder).
func whole(c Change, base, now map[string]*Entry) bool {
	if c.What != "changed" {
		return true
	}
	b, n := base[c.Path], now[c.Path]
	return b == nil || n == nil || b.Kind != n.Kind
}

func same(b, e *Entry) bool {
	if b.Kind != e.Kind || b.Mode != e.Mode {
		return false
	}
	switch b.Kind {
	case "file":
		if b.Stamp == e.Stamp {
			return true
		}
		return b.Sum != "" && b.Sum != "unreadable" && b.Sum == e.Sum
	case "link":
		return b.Target == e.Target
	case "other":
		return b.Stamp == e.Stamp
	}
	return true
}

// Roots of changes, for a message: the distinct roots the changed paths
// lie under, as absolute paths.
func ChangedRoots(s *Snapshot, changes []Change) []string {
	var out []string
	for _, c := range changes {
		for _, r := range s.Roots {
			if paths.Within(r, c.Path) {
				p := filepath.Join(s.Project, filepath.FromSlash(r))
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
