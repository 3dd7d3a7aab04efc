package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/fswatch"
	"github.com/piagent/piagent/internal/safefile"
)

// integrity is the state, at the session's first request, of the
// registered paths inside the project that decide what Pi loads or git runs:
// the project's Pi folder, and .git/hooks and .git/config when the project
// had a .git then. The sandbox cannot always keep a command from creating
// or changing them (a writable project, no mount namespace, a folder that
// did not exist yet); a change seen here blocks every further tool call of
// the session until a person has looked. MCP files are left out: the gate
// already treats whatever appears in them as unapproved.
type integrity struct {
	paths []string
	state map[string]string
	watch *fswatch.Watch // nil: compare on every call
	last  []string       // the last comparison's answer
}

// skipInPiDir are paths in the project's Pi folder that the adapter or a
// person's own /piagent-mcp command write during a session; the gate
// covers what they mean.
var skipInPiDir = []string{"mcp.json", "mcp-traces"}

func newIntegrity(project, configDir string) *integrity {
	in := &integrity{paths: []string{filepath.Join(project, configDir)}}
	if fi, err := os.Stat(filepath.Join(project, ".git")); err == nil && fi.IsDir() {
		git := filepath.Join(project, ".git")
		// what the next git command reads: the sandbox keeps what exists
		// read-only, and these may not exist yet
		in.paths = append(in.paths, filepath.Join(git, "hooks"), filepath.Join(git, "config"), filepath.Join(git, "commondir"),
			filepath.Join(git, "info"), filepath.Join(git, "worktrees"))
	}
	// Watch the folders holding each path (creation, removal, rename) and
	// each existing tree beneath them, before reading the state, so that no
	// change falls between the two.
	var parents []string
	for _, p := range in.paths {
		parents = append(parents, filepath.Dir(p))
	}
	in.watch = watchFolders(in.paths, parents)
	in.state = in.read()
	return in
}

func (in *integrity) read() map[string]string {
	out := make(map[string]string, len(in.paths))
	for _, p := range in.paths {
		out[p] = fingerprint(p, filepath.Base(p) == ".pi" || strings.HasSuffix(p, string(filepath.Separator)+".pi"))
	}
	return out
}

// changed lists the watched paths whose state differs from the session's
// start.
func (in *integrity) changed() []string {
	if in.watch != nil && !in.watch.Changed() {
		return in.last
	}
	in.last = in.compare()
	return in.last
}

func (in *integrity) compare() []string {
	var out []string
	for p, now := range in.read() {
		if now != in.state[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// fingerprint summarises a file or folder by the names and stamps
// (safefile.FromInfo: size, mode, inode, modification and change times)
// beneath it (bounded), or "absent".
func fingerprint(p string, piDir bool) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	if !fi.IsDir() {
		return fmt.Sprintf("%v", safefile.FromInfo(fi))
	}
	h := sha256.New()
	n := 0
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(p, q)
		if piDir && slices.Contains(skipInPiDir, strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > 5000 {
			fmt.Fprint(h, "…")
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if d.IsDir() {
			// a folder's own times change with every entry written in it
			fmt.Fprintf(h, "%s\x00%v\n", rel, info.Mode())
			return nil
		}
		fmt.Fprintf(h, "%s\x00%v\n", rel, safefile.FromInfo(info))
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

// watchFolders watches the folders holding each path in parents and every
// folder of each tree; nil when there is no watch to be had, and then every
// call compares.
func watchFolders(trees, parents []string) *fswatch.Watch {
	w := fswatch.New()
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
