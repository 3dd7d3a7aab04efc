package gate

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/piagent/piagent/internal/safefile"
)

// snapFS is the real file system as one computation sees it: each path is
// stat'ed and each file read once, and a folder asked about often is listed
// once, after which a name missing from it costs no system call. A gate is
// computed from one look at the files; its Signature, taken after, says
// when to look again.
type snapFS struct {
	stats map[string]statAnswer
	files map[string]fileAnswer
	asked map[string]int             // folder → stats of names in it so far
	names map[string]map[string]bool // folder → its names, once listed
}

type statAnswer struct {
	fi  fs.FileInfo
	err error
}

type fileAnswer struct {
	data []byte
	err  error
}

// listAfter is how many names of one folder are asked about before the
// folder is listed instead.
const listAfter = 8

// newSnapFS makes room for a stat per server (its command or an argument
// that could be a file) at once: a map grown from nothing copies itself at
// each doubling.
func newSnapFS(servers int) *snapFS {
	return &snapFS{stats: make(map[string]statAnswer, servers), files: map[string]fileAnswer{}, asked: map[string]int{}, names: map[string]map[string]bool{}}
}

func (f *snapFS) Stat(p string) (fs.FileInfo, error) {
	if a, ok := f.stats[p]; ok {
		return a.fi, a.err
	}
	if f.missing(p) {
		err := &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
		f.stats[p] = statAnswer{err: err}
		return nil, err
	}
	fi, err := os.Stat(p)
	f.stats[p] = statAnswer{fi, err}
	return fi, err
}

func (f *snapFS) ReadFile(p string) ([]byte, error) {
	if a, ok := f.files[p]; ok {
		return a.data, a.err
	}
	data, err := safefile.Read(p, safefile.Options{Max: maxPinnedFile})
	f.files[p] = fileAnswer{data, err}
	return data, err
}

// consulted lists every path the computation asked about, present or
// missing: where a later file would change its answer (a node_modules
// made above a server's package, a command installed on PATH).
func (f *snapFS) consulted() []string {
	out := make([]string, 0, len(f.stats)+len(f.files))
	for p := range f.stats {
		out = append(out, p)
	}
	for p := range f.files {
		out = append(out, p)
	}
	return out
}

// missing reports a path whose folder was listed without its name. Only
// where names are case-sensitive (Linux), so that a listing can say no.
func (f *snapFS) missing(p string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	dir, name := filepath.Dir(p), filepath.Base(p)
	names, listed := f.names[dir]
	if !listed {
		if f.asked[dir]++; f.asked[dir] < listAfter {
			return false
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			f.names[dir] = nil // unreadable: stat each name
			return false
		}
		names = make(map[string]bool, len(entries))
		for _, e := range entries {
			names[e.Name()] = true
		}
		f.names[dir] = names
	}
	return names != nil && !names[name]
}

// onDisk reports an FS that is this machine's (OSFS, or a snapshot of it),
// whose files fileDigest may read and cache by their stamps.
func onDisk(f FS) bool {
	_, snap := f.(*snapFS)
	return snap || f == OSFS
}
