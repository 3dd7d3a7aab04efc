package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// A whole-tree pin digests every file under a server's folder. hashCache
// spares a process from reading a file twice; the digests are also kept on
// disk, in piagent's own registered folder, so that the next piagent-mcp
// list or helper start costs a stat per file, not a read. An entry is
// trusted only for a settled stamp that matches the file's stat exactly
// (size, inode, device, mode, modification and change times): writing a
// file changes its change time, which no one but the kernel sets. A cache
// file that is missing, unreadable, not the person's alone, or not in this
// format is ignored, and everything is read again.

// treeCacheHeader is the cache file's first line.
const treeCacheHeader = "piagent tree digests 1"

// maxTreeCache bounds the entries kept on disk.
const maxTreeCache = 200000

// TreeCachePath is the file under home that holds the tree digests.
func TreeCachePath(home string) string {
	return registry.TreeDigests(home)
}

// digestReads counts the files fileDigest had to read (tests and
// benchmarks).
var digestReads atomic.Int64

// settledReads counts the reads that added a digest the disk cache would
// keep: a file just edited (its stamp too recent) is read again at each
// check and is not worth rewriting the whole cache for.
var settledReads atomic.Int64

var treeDisk struct {
	sync.Mutex
	loaded map[string]bool // homes whose file was read into hashCache
}

// loadTreeCache reads home's cache file into hashCache once per process.
func loadTreeCache(home string) {
	if home == "" {
		return
	}
	treeDisk.Lock()
	defer treeDisk.Unlock()
	if treeDisk.loaded[home] {
		return
	}
	if treeDisk.loaded == nil {
		treeDisk.loaded = map[string]bool{}
	}
	treeDisk.loaded[home] = true
	data, err := safefile.Read(TreeCachePath(home), safefile.Options{Own: true, Max: 64 << 20})
	if err != nil {
		return
	}
	if m := parseTreeCache(data); m != nil {
		hashCache.add(m)
	}
}

// parseTreeCache reads the cache format: the header, then one line per
// file, "digest dev ino size mtime ctime mode path". Anything else yields
// no entries at all. The digests and paths are slices of one string made
// of data, so ten thousand lines cost two allocations and the map.
func parseTreeCache(data []byte) map[string]cachedHash {
	text := string(data)
	line, rest, _ := strings.Cut(text, "\n")
	if line != treeCacheHeader || rest == "" || rest[len(rest)-1] != '\n' {
		return nil
	}
	out := make(map[string]cachedHash, strings.Count(rest, "\n"))
	for rest != "" {
		line, rest, _ = strings.Cut(rest, "\n")
		var f [8]string
		for i := range 7 {
			var ok bool
			if f[i], line, ok = strings.Cut(line, " "); !ok {
				return nil
			}
		}
		f[7] = line
		if !strings.HasPrefix(f[0], "sha256:") || !filepath.IsAbs(f[7]) {
			return nil
		}
		var n [6]uint64
		for i := range n {
			v, ok := atou(f[i+1])
			if !ok {
				return nil
			}
			n[i] = v
		}
		key := safefile.Stamp{Exists: true, Dev: n[0], Ino: n[1], Size: int64(n[2]), Mtime: int64(n[3]), Ctime: int64(n[4]), Mode: fs.FileMode(n[5])}
		if !key.Mode.IsRegular() {
			return nil
		}
		out[f[7]] = cachedHash{key: key, digest: f[0]}
	}
	return out
}

// atou reads a decimal number that fits in 64 bits (digits only, as the
// cache writes them).
func atou(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := uint64(s[i] - '0')
		if c > 9 || v > (math.MaxUint64-c)/10 {
			return 0, false
		}
		v = v*10 + c
	}
	return v, true
}

// saveTreeCache writes every settled digest this process knows to home's
// cache file, when it learnt a settled one since readsBefore (a
// settledReads count).
func saveTreeCache(home string, readsBefore int64) {
	if home == "" || settledReads.Load() == readsBefore {
		return
	}
	var b bytes.Buffer
	b.WriteString(treeCacheHeader + "\n")
	n := 0
	hashCache.each(func(path string, c cachedHash) bool {
		if !c.key.Settled() || strings.ContainsRune(path, '\n') {
			return true
		}
		fmt.Fprintf(&b, "%s %d %d %d %d %d %d %s\n", c.digest, c.key.Dev, c.key.Ino, c.key.Size, c.key.Mtime, c.key.Ctime, uint32(c.key.Mode), path)
		n++
		return n < maxTreeCache
	})
	if n == 0 {
		return
	}
	// Best effort: a cache that cannot be written (no ~/.pi yet, a
	// sandboxed command's read-only home) costs reads, never an answer.
	if _, err := os.Stat(filepath.Dir(registry.OwnDir(home))); err != nil {
		return
	}
	if err := os.Mkdir(registry.OwnDir(home), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	_ = atomicfile.Write(TreeCachePath(home), b.Bytes())
}
