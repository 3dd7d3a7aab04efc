// Package atomicfile writes piagent's own small state files safely: a
// temporary file in the same folder, synced, mode 0600, renamed over the
// old one; and a locked read-modify-write so that concurrent processes never
// lose one another's change, under lock files an agent cannot hold (Lock).
package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

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
func WriteMode(path string, data []byte, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
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
