// Package gitnest finds the repositories nested in a project that git
// enters from it, and the settings in them that would make git run a
// program or read a file piagent does not check.
//
// The sandbox keeps the project's own .git/config, hooks and the
// submodules that existed when a command started read-only, but a
// repository a command makes inside the work tree (sub/.git, or a new
// .git/modules/NAME) is a git folder of its own: once the project's index
// records it as a gitlink, the person's next `git status` or `git diff` in
// the project runs git inside it, with its config (core.fsmonitor runs a
// program). A mount cannot cover a folder that does not exist yet, so the
// engine looks after each command: Gitlinks reads the index, Check
// judges each gitlink's repository, and what Check names is moved to
// piagent's quarantine.
package gitnest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// gitlinkMode is the index mode of a submodule's entry.
const gitlinkMode = 0o160000

// Gitlinks lists the paths (slash-separated, relative to the work tree) of
// the gitlink entries in a git index file of version 2, 3 or 4, whose
// object names are hashSize bytes (20 for SHA-1, 32 for SHA-256). A file
// it cannot read to its end is an error: the caller cannot tell what it
// holds.
func Gitlinks(index []byte, hashSize int) ([]string, error) {
	if len(index) < 12 || string(index[:4]) != "DIRC" {
		return nil, errors.New("not a git index")
	}
	version := binary.BigEndian.Uint32(index[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("git index version %d", version)
	}
	n := binary.BigEndian.Uint32(index[8:12])
	b := index[12:]
	fixed := 40 + hashSize + 2 // stat data and mode, object name, flags
	var links []string
	var prev []byte // version 4: the previous entry's path
	for i := uint32(0); i < n; i++ {
		if len(b) < fixed {
			return nil, errors.New("git index: truncated entry")
		}
		mode := binary.BigEndian.Uint32(b[24:28])
		flags := binary.BigEndian.Uint16(b[40+hashSize:])
		off := fixed
		if flags&0x4000 != 0 { // extended flags
			if version < 3 {
				return nil, errors.New("git index: extended flags in version 2")
			}
			off += 2
		}
		if len(b) < off {
			return nil, errors.New("git index: truncated entry")
		}
		var path []byte
		if version == 4 {
			strip, used := varint(b[off:])
			if used == 0 || strip > uint64(len(prev)) {
				return nil, errors.New("git index: bad path prefix")
			}
			off += used
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return nil, errors.New("git index: unterminated path")
			}
			path = append(append([]byte{}, prev[:len(prev)-int(strip)]...), b[off:off+end]...)
			off += end + 1
			prev = path
		} else {
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return nil, errors.New("git index: unterminated path")
			}
			path = b[off : off+end]
			// 1 to 8 NULs end the entry at a multiple of 8 bytes
			off = (off + end + 8) &^ 7
			if len(b) < off {
				return nil, errors.New("git index: truncated entry")
			}
		}
		if mode&0o170000 == gitlinkMode {
			links = append(links, string(path))
		}
		b = b[off:]
	}
	return links, nil
}

// varint is git's offset varint (varint.c): the value and the bytes used,
// 0 for a malformed one.
func varint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		v++
		c = b[i]
		i++
		v = v<<7 | uint64(c&127)
	}
	return v, i
}

// HashSize is the object name size of the repository at gitDir: 32 when
// its config says extensions.objectFormat = sha256, else 20.
func HashSize(gitDir string) int {
	b, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err == nil {
		for _, s := range settings(b) {
			if s.key == "extensions.objectformat" && strings.EqualFold(strings.TrimSpace(s.value), "sha256") {
				return 32
			}
		}
	}
	return 20
}

// Risk is one path inside the project (slash-separated, relative to it)
// that makes git, entering a nested repository from the project, run what
// piagent did not check, and why.
type Risk struct {
	Path string
	Why  string
}

// Check judges the repository of each gitlink (paths from Gitlinks) in the
// work tree: one git would enter (its .git exists) is safe when its .git is
// a folder, or a file naming a folder inside the project, whose config has
// only settings on the allow-list (what git init, git clone and git
// submodule write) and which has no commondir. Anything else is a Risk:
// the config, the commondir file, or the .git entry itself when it leads
// out of the project or is a link.
func Check(project string, links []string) []Risk {
	var risks []Risk
	for _, l := range links {
		rel := filepath.ToSlash(filepath.Clean(filepath.FromSlash(l)))
		if rel == "." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue
		}
		dotgit := rel + "/.git"
		fi, err := os.Lstat(filepath.Join(project, filepath.FromSlash(dotgit)))
		if err != nil {
			continue // not populated: git does not enter it
		}
		var gitDir string // relative to the project
		switch {
		case fi.IsDir():
			gitDir = dotgit
		case fi.Mode().IsRegular():
			target, ok := gitdirFile(project, rel)
			if !ok {
				risks = append(risks, Risk{dotgit, "a .git file naming a repository outside the project"})
				continue
			}
			gitDir = target
		default:
			risks = append(risks, Risk{dotgit, "a .git that is neither a folder nor a file"})
			continue
		}
		risks = append(risks, checkGitDir(project, gitDir)...)
	}
	return risks
}

// gitdirFile reads the "gitdir: X" file at rel/.git and returns X relative
// to the project when it is a folder inside it (git submodule's
// .git/modules/NAME), not reached through a link.
func gitdirFile(project, rel string) (string, bool) {
	dir := filepath.Join(project, filepath.FromSlash(rel))
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil || len(b) > 4096 {
		return "", false
	}
	abs, ok := ParseGitdir(b, dir)
	if !ok {
		return "", false
	}
	r, err := filepath.Rel(project, filepath.Clean(abs))
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return "", false
	}
	// every folder on the way a real folder: no link leads elsewhere
	cur := project
	for _, part := range strings.Split(r, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return "", false
		}
	}
	return filepath.ToSlash(r), true
}

func checkGitDir(project, gitDir string) []Risk {
	var risks []Risk
	dir := filepath.Join(project, filepath.FromSlash(gitDir))
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		risks = append(risks, Risk{gitDir + "/commondir", "a commondir: git would read another repository's config"})
	}
	cfg := gitDir + "/config"
	fi, err := os.Lstat(filepath.Join(dir, "config"))
	switch {
	case err != nil:
		return risks
	case !fi.Mode().IsRegular():
		return append(risks, Risk{cfg, "a config that is not a file"})
	case fi.Size() > 1<<20:
		return append(risks, Risk{cfg, "a config larger than piagent reads"})
	}
	b, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		return append(risks, Risk{cfg, "a config piagent cannot read: " + err.Error()})
	}
	if key, ok := ConfigRisk(b); ok {
		risks = append(risks, Risk{cfg, "a config setting " + key})
	}
	return risks
}

// GitDir is the git folder of the work tree at project: project/.git, or
// the folder a .git file names (a worktree's); "" when there is none.
func GitDir(project string) string {
	p := filepath.Join(project, ".git")
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return p
	case !fi.Mode().IsRegular() || fi.Size() > 4096:
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	target, _ := ParseGitdir(b, project)
	return target
}

// ParseGitdir reads a .git file's content ("gitdir: X", git's gitfile)
// found in folder dir: the folder it names, absolute and clean.
func ParseGitdir(content []byte, dir string) (string, bool) {
	t, ok := strings.CutPrefix(strings.TrimSpace(string(content)), "gitdir:")
	if t = strings.TrimSpace(t); !ok || t == "" {
		return "", false
	}
	if !filepath.IsAbs(t) {
		t = filepath.Join(dir, t)
	}
	return filepath.Clean(t), true
}

// GitReads reports whether git would read index at all: git checks the
// trailing hash of the whole file (all zeros when index.skipHash is set)
// and refuses an index whose hash does not match, so a file that fails it
// names no repository git would enter.
func GitReads(index []byte, hashSize int) bool {
	if len(index) < 12+hashSize || string(index[:4]) != "DIRC" {
		return false
	}
	body, trailer := index[:len(index)-hashSize], index[len(index)-hashSize:]
	if bytes.Equal(trailer, make([]byte, hashSize)) {
		return true
	}
	switch hashSize {
	case 20:
		h := sha1.Sum(body)
		return bytes.Equal(h[:], trailer)
	case 32:
		h := sha256.Sum256(body)
		return bytes.Equal(h[:], trailer)
	}
	return false
}

// Links reads the index of the repository at gitDir and lists its
// gitlinks. A missing index, or one git would refuse (GitReads), has none;
// one git reads that Gitlinks cannot is an error.
func Links(gitDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "index"))
	switch {
	case os.IsNotExist(err):
		return nil, nil
	case err != nil:
		return nil, err
	case len(b) > 64<<20:
		return nil, errors.New("the git index is larger than 64 MiB")
	}
	hash := HashSize(gitDir)
	links, err := Gitlinks(b, hash)
	if err != nil && !GitReads(b, hash) {
		return nil, nil // git refuses it too: it names nothing git enters
	}
	return links, err
}

// Changed is Check's risks whose path changed at or after since (its
// inode's ctime, which no command can set back): a nested repository the
// person had before is theirs.
func Changed(project string, links []string, since time.Time) []Risk {
	var out []Risk
	for _, r := range Check(project, links) {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(project, filepath.FromSlash(r.Path)), &st) != nil {
			continue
		}
		if time.Unix(st.Ctim.Unix()).Before(since) {
			continue
		}
		out = append(out, r)
	}
	return out
}
