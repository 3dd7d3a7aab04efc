// Package atomicfile writes piagent's own small state files safely: a
// temporary file in the same folder, synced, mode 0600, renamed over the
// old one; and a locked read-modify-write so that concurrent processes never
// lose one another's change, under lock files an agent cannot hold (Lock).
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/safefile"
)

// Write replaces path with data atomically, mode 0600. Folders are created
// 0700.
func Write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteMode(path, data, 0o600)
}

// WriteMode replaces path with data atomically: a temporary file in the same
// folder (which must exist), given mode, synced, renamed over path; the
// folder is synced after. The one way piagent replaces a file.
//
// Where the file system can (Linux, O_TMPFILE) the temporary file has no
// name until an instant before the rename, so a process killed while
// writing leaves nothing beside a repository's file for `git add -A` to
// take; leftovers of this pattern whose writer is gone (or of the pattern
// before it) are removed at the next write to the same file.
func WriteMode(path string, data []byte, mode os.FileMode) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	removeLeftovers(dir, base)
	tmpName := filepath.Join(dir, tempName(base))
	f, named := openUnnamed(dir, mode)
	if f == nil {
		if f, err = os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return err
		}
		named = true
	}
	defer func() {
		if err != nil {
			f.Close()
			if named {
				os.Remove(tmpName)
			}
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if !named {
		if err = linkUnnamed(f, tmpName); err != nil {
			return err
		}
		named = true
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmpName, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// tempName is a temporary file's name for base: its writer's pid in it, so
// that a later write can tell a leftover from a file being written.
func tempName(base string) string {
	return fmt.Sprintf(".%s.piagent-%d-%d.tmp", base, os.Getpid(), rand.Uint32())
}

// leftoverAge is how old a temporary file of the earlier pattern
// (.NAME.DIGITS.tmp, no pid) must be to count as left over.
const leftoverAge = time.Minute

// removeLeftovers removes temporary files of base in dir that no running
// writer owns.
func removeLeftovers(dir, base string) {
	matches, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".*.tmp"))
	for _, m := range matches {
		mid := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "."+base+"."), ".tmp")
		if rest, ok := strings.CutPrefix(mid, "piagent-"); ok {
			pidText, _, _ := strings.Cut(rest, "-")
			if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 && pid != os.Getpid() && gone(pid) {
				os.Remove(m)
			}
			continue
		}
		if _, err := strconv.ParseUint(mid, 10, 64); err != nil {
			continue // not a name this package made
		}
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > leftoverAge {
			os.Remove(m)
		}
	}
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// MaxState is the largest state file Update reads.
const MaxState = 64 << 20

// Update runs fn on the current content of path (nil when there is none)
// under path+".lock", and writes what fn returns when it differs. The
// content is read through safefile: a regular file, the person's by
// StrictModes, valid UTF-8, at most MaxState bytes; anything else is an
// error and nothing is written. fn's error
// is returned and nothing is written.
func Update(path string, fn func(old []byte) ([]byte, error)) error {
	return UpdateWait(path, LockOptions{}, fn)
}

// UpdateWait is Update waiting for the lock as o says (a *LockedError
// naming the holder when it is still held).
func UpdateWait(path string, o LockOptions, fn func(old []byte) ([]byte, error)) error {
	release, err := Lock(path+".lock", o)
	if err != nil {
		return err
	}
	defer release()
	old, err := safefile.Read(path, safefile.Options{Max: MaxState, Own: true, UTF8: true})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := fn(old)
	if err != nil {
		return err
	}
	if bytes.Equal(out, old) {
		return nil
	}
	return Write(path, out)
}
