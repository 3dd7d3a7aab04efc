package mcpedit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
)

// MaxSize is the largest config file Update reads.
const MaxSize = 8 << 20

// Errors Update returns for files it will not touch.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrOutside    = errors.New("resolves outside the folder it must stay in")
	ErrTooLarge   = errors.New("file too large")
	// ErrBroken is an edit that would leave the file unparseable; it means
	// a bug in this package, and nothing is written.
	ErrBroken = errors.New("edit would leave the file unreadable")
)

// Options say how Update writes. The zero value works.
type Options struct {
	// Mode is the permission of a file Update creates; 0 means 0644. An
	// existing file keeps its mode.
	Mode os.FileMode
	// DirMode is the permission of folders Update creates; 0 means 0755.
	DirMode os.FileMode
	// LockPath is the lock file held around the read-modify-write; "" means
	// the file's path plus ".lock".
	LockPath string
	// Waiting, when set, is told who holds the lock if the edit has to
	// wait for it.
	Waiting func(holder string)
	// Within, when set, is a folder the file must resolve into after
	// symbolic links are followed (a repository's file must not lead out
	// of the repository).
	Within string
	// DryRun computes the result and writes nothing, taking no lock.
	DryRun bool
	// RemoveIfEmpty deletes the file instead of writing it when the edit
	// leaves nothing in it: no server, no setting, no comment.
	RemoveIfEmpty bool
	// Prepare, when set, runs under the lock once the change is known and
	// before it is made (res.After is what will be written): an error from
	// it leaves the file as it was, and undo, when the change then fails,
	// takes back what Prepare did. A repository add records the approval
	// of what it writes here, so that a kill between the two leaves
	// neither, never the server without its approval.
	Prepare func(res Result) (undo func(), err error)
}

// Result is what an Update did, or would do.
type Result struct {
	Path    string // the file written: the link's target when path is a link
	Existed bool
	Before  []byte
	After   []byte
	Changed bool
	Removed bool // RemoveIfEmpty applied: the file is gone (or would be)
}

// Update applies edit to the file at path and, when the text changed,
// replaces the file atomically: a temporary file in the same folder, synced,
// renamed over it. The read, the edit and the write happen under a lock.
// A file that cannot be parsed is never overwritten (the error is a
// *FileError naming path:line:col); nor is anything but a regular file. When
// edit returns an error nothing is written and Update returns it.
func Update(path string, o Options, edit func(*Doc) error) (Result, error) {
	res := Result{Path: filepath.Clean(path)}
	target, err := resolve(res.Path, o.Within)
	if err != nil {
		return res, err
	}
	res.Path = target
	if !o.DryRun {
		dirMode := o.DirMode
		if dirMode == 0 {
			dirMode = 0o755
		}
		if err := os.MkdirAll(filepath.Dir(target), dirMode); err != nil {
			return res, fmt.Errorf("create the folder for %s: %w", target, err)
		}
		lockPath := o.LockPath
		if lockPath == "" {
			lockPath = target + ".lock"
		}
		if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
			return res, fmt.Errorf("create the lock folder: %w", err)
		}
		unlock, err := atomicfile.Lock(lockPath, atomicfile.LockOptions{Waiting: o.Waiting})
		if err != nil {
			return res, fmt.Errorf("lock %s: %w", target, err)
		}
		defer unlock()
	}
	data, mode, existed, err := readRegular(target)
	if err != nil {
		return res, err
	}
	res.Existed, res.Before = existed, data
	doc, err := Parse(target, data)
	if err != nil {
		return res, err
	}
	if err := edit(doc); err != nil {
		return res, err
	}
	res.After = doc.Bytes()
	res.Changed = !bytes.Equal(res.After, data)
	if !res.Changed {
		return res, nil
	}
	if _, _, err := jsonc.Parse(bytes.Clone(res.After)); err != nil {
		return res, fmt.Errorf("%s: %w: %v", target, ErrBroken, err)
	}
	if o.RemoveIfEmpty && existed && holdsNothing(res.After) {
		res.Removed = true
		if o.DryRun {
			return res, nil
		}
		undo, err := prepare(o, res)
		if err != nil {
			return res, err
		}
		if err := os.Remove(target); err != nil {
			undo()
			return res, fmt.Errorf("remove %s, which the edit left empty: %w", target, err)
		}
		return res, nil
	}
	if o.DryRun {
		return res, nil
	}
	if !existed {
		mode = o.Mode
		if mode == 0 {
			mode = 0o644
		}
	}
	undo, err := prepare(o, res)
	if err != nil {
		return res, err
	}
	if err := writeAtomic(target, res.After, mode); err != nil {
		undo()
		return res, err
	}
	return res, nil
}

// prepare runs o.Prepare, if any; undo is never nil.
func prepare(o Options, res Result) (undo func(), err error) {
	undo = func() {}
	if o.Prepare == nil {
		return undo, nil
	}
	u, err := o.Prepare(res)
	if err != nil {
		return undo, err
	}
	if u != nil {
		undo = u
	}
	return undo, nil
}

// resolve follows symbolic links to the file that would be written. A
// missing file resolves through its folder. With within set, the result
// must lie inside within's real path.
func resolve(path, within string) (string, error) {
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	} else if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("%s is a symbolic link that cannot be followed: %w", path, err)
	} else {
		target = realParent(path)
	}
	if within == "" {
		return target, nil
	}
	root := within
	if real, err := filepath.EvalSymlinks(within); err == nil {
		root = real
	}
	if !paths.Within(filepath.Clean(root), target) {
		return "", fmt.Errorf("%s %w (%s)", path, ErrOutside, root)
	}
	return target, nil
}

// realParent resolves the nearest existing folder above a missing path and
// joins the rest to it.
func realParent(path string) string {
	rest := ""
	for dir := path; ; {
		parent := filepath.Dir(dir)
		rest = filepath.Join(filepath.Base(dir), rest)
		if real, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(real, rest)
		}
		if parent == dir || parent == "." || parent == string(filepath.Separator) {
			return path
		}
		dir = parent
	}
}

// readRegular reads a regular file through safefile (no FIFO, device or
// file over MaxSize, opened without blocking); a missing one reads as
// empty.
func readRegular(path string) (data []byte, mode os.FileMode, existed bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	data, err = safefile.Read(path, safefile.Options{Max: MaxSize})
	var se *safefile.Error
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return nil, 0, true, fmt.Errorf("%s: %w", path, ErrTooLarge)
	case errors.As(err, &se):
		return nil, 0, true, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, se.Detail)
	case errors.Is(err, os.ErrNotExist):
		return nil, 0, false, nil
	case err != nil:
		return nil, 0, true, err
	}
	return data, fi.Mode().Perm(), true, nil
}

// writeAtomic replaces path with data (package atomicfile).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := atomicfile.WriteMode(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// holdsNothing reports whether a file's text is an empty object or one whose
// only member is an empty mcpServers, with no comment anywhere.
func holdsNothing(data []byte) bool {
	var b []byte
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			b = append(b, c)
		}
	}
	return string(b) == "{}" || string(b) == `{"mcpServers":{}}`
}
