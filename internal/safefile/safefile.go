// Package safefile is the one way piagent reads a file it trusts (its own
// state under ~/.pi, and every configuration file whose content decides
// what may run) and the one way it tells that such a file changed.
//
// Read opens without blocking and reads only a regular file, never more
// than a limit: a repository's link to /dev/zero, a FIFO or a huge file is
// a named error within one open and one fstat, never a hang. With Own set
// the file and its folder must be the person's by OpenSSH's StrictModes
// rule, and the path itself may not be a link.
//
// StampOf is a path's identity: absence, type, size, inode, modification
// and change times, and the content's digest while the change time is too
// recent to tell two writes apart. A rewrite that restores size and
// modification time (cp -p, an edit of the same length, touch -r) still
// changes the change time, which no one but the kernel can set.
package safefile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"
)

// DefaultMax is the size limit of Options{}.Max.
const DefaultMax = 8 << 20

var (
	// ErrNotRegular: a device, FIFO, socket or folder where a file is read.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a file above its kind's limit.
	ErrTooLarge = errors.New("file too large")
	// ErrLink: a symbolic link where piagent's own file must be.
	ErrLink = errors.New("a symbolic link where piagent's own file must be")
	// ErrInvalidUTF8: a file that must be UTF-8 is not.
	ErrInvalidUTF8 = errors.New("invalid utf-8")
	// ErrUnsafe: a file or folder that decides what piagent allows can be
	// written by someone other than the person (see UnsafeError).
	ErrUnsafe = errors.New("not the person's alone")
)

// Options says how a file must be. The zero value reads a regular file of
// at most DefaultMax bytes, following links.
type Options struct {
	// Max is the size limit in bytes; 0 means DefaultMax.
	Max int64
	// Own: the file is piagent's own state: the file and its folder must
	// pass StrictModes (Check). A link is followed once, and what it leads
	// to and that folder are checked too; the file itself is opened
	// without following.
	Own bool
	// UTF8: the content must be valid UTF-8.
	UTF8 bool
}

// Error is a file that cannot be read as its kind must be. It wraps one of
// the sentinels above.
type Error struct {
	Path   string
	Err    error
	Detail string // what was found, e.g. "character device"
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s: %v (%s)", e.Path, e.Err, e.Detail)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Read returns path's content if it is a regular file of at most o.Max
// bytes (and as o says). A missing file is the *fs.PathError of
// fs.ErrNotExist, as os.ReadFile gives it.
func Read(path string, o Options) ([]byte, error) {
	return read(path, o, nil)
}

// read is Read; stat, when not nil, is a stat of path (following links)
// the caller has just made, which open would otherwise make again.
func read(path string, o Options, stat fs.FileInfo) ([]byte, error) {
	f, fi, err := open(path, o, stat)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	max := o.max()
	// fi.Size() is no bound: the file may grow while it is read. Read
	// into a buffer of its size and a byte, grown only if it grew (as
	// os.ReadFile does; bytes.Buffer's ReadFrom doubled the buffer before
	// the read that finds the end, three times a file's size in all).
	data := make([]byte, 0, min(fi.Size(), max)+1)
	r := io.LimitReader(f, max+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	if int64(len(data)) > max {
		return nil, &Error{Path: path, Err: ErrTooLarge, Detail: "over " + size(max)}
	}
	if o.UTF8 && !utf8.Valid(data) {
		return nil, &Error{Path: path, Err: ErrInvalidUTF8, Detail: "at byte " + fmt.Sprint(firstInvalid(data))}
	}
	return data, nil
}

// Sum is the SHA-256 of path's content, read as Read reads it (a regular
// file of at most o.Max bytes, and as o says, with the same errors), through
// a buffer of at most 64 KiB: a large file is never held whole in memory,
// however many are digested at once.
func Sum(path string, o Options) ([sha256.Size]byte, error) {
	if o.UTF8 { // validated whole
		data, err := Read(path, o)
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		return sha256.Sum256(data), nil
	}
	f, fi, err := open(path, o, nil)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer f.Close()
	limit := o.max()
	h := sha256.New()
	buf := make([]byte, min(max(fi.Size()+1, 512), 64<<10))
	n, err := io.CopyBuffer(h, io.LimitReader(f, limit+1), buf)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("read %s: %w", path, err)
	}
	if n > limit {
		return [sha256.Size]byte{}, &Error{Path: path, Err: ErrTooLarge, Detail: "over " + size(limit)}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, nil
}

func (o Options) max() int64 {
	if o.Max <= 0 {
		return DefaultMax
	}
	return o.Max
}

// open opens path for reading as o says and returns it with its fstat.
func open(path string, o Options, stat fs.FileInfo) (*os.File, fs.FileInfo, error) {
	name := path
	if o.Own {
		// A link to the person's own file (a dotfiles checkout) is
		// followed once, here, and what it leads to is checked as the
		// file itself is: its folder, then the file without following.
		real, err := resolve(path)
		if err != nil {
			return nil, nil, err
		}
		path = real
	}
	// A stat first, so that a device is never opened at all (opening one
	// can have effects of its own): the caller's, when it has just made
	// one of the same path (StampOf).
	before := stat
	if before == nil || o.Own {
		var err error
		if before, err = os.Stat(path); err != nil {
			return nil, nil, err
		}
	}
	if err := regular(name, before, o); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK keeps a FIFO swapped in after the stat from blocking the
	// open; O_NOFOLLOW keeps a link swapped in from being followed. The
	// fstat then decides.
	flags := os.O_RDONLY | nonblock
	if o.Own {
		flags |= nofollow
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if isLoop(err) {
			return nil, nil, &Error{Path: name, Err: ErrLink, Detail: "it changed while it was read"}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(name, fi, o)
	}
	if err == nil && o.Own {
		err = check(path, fi, false)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// resolve checks path's folder, follows path if it is a link, and checks
// the folder of what it leads to. A missing file is returned as the
// *fs.PathError of fs.ErrNotExist for path.
func resolve(path string) (string, error) {
	if err := checkDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if err := checkDir(filepath.Dir(real)); err != nil {
		var ue *UnsafeError
		if errors.As(err, &ue) {
			return "", &UnsafeError{Path: path, Why: "is a link to " + real + ", whose folder " + ue.Why,
				Fix: "rm " + path + " (piagent makes a new one), or " + ue.Fix}
		}
		return "", err
	}
	return real, nil
}

func regular(path string, fi fs.FileInfo, o Options) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &Error{Path: path, Err: ErrLink}
	case !fi.Mode().IsRegular():
		return &Error{Path: path, Err: ErrNotRegular, Detail: typeName(fi.Mode())}
	case fi.Size() > o.max():
		return &Error{Path: path, Err: ErrTooLarge, Detail: size(fi.Size()) + ", the limit is " + size(o.max())}
	}
	return nil
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeDir != 0:
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// Stamp is what a path looked like. Stamps are compared with ==: any
// difference means the path changed.
type Stamp struct {
	Exists       bool
	Mode         fs.FileMode
	Size         int64
	Mtime, Ctime int64 // nanoseconds
	Dev, Ino     uint64
	Sum          [sha256.Size]byte // content, while the change time is racy
}

// RacyWindow is how recent a change time must be for a stamp to also hold
// the content's digest: file systems keep times in ticks (a jiffy on
// Linux, a second or two on some), and two writes within one tick can leave
// every time as it was.
const RacyWindow = 3 * time.Second

// racyMax is the largest file a racy stamp reads.
const racyMax = 1 << 20

// StampOf is path's stamp, following links.
func StampOf(path string) Stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{}
	}
	st := FromInfo(fi)
	if fi.Mode().IsRegular() && fi.Size() <= racyMax && racy(st.Ctime, st.Mtime) {
		if data, err := read(path, Options{Max: racyMax}, fi); err == nil {
			st.Sum = sha256.Sum256(data)
		} else {
			st.MarkUnread() // unreadable now
		}
	}
	return st
}

// FromInfo is the stamp of what a stat returned, without the content.
func FromInfo(fi fs.FileInfo) Stamp {
	st := Stamp{Exists: true, Mode: fi.Mode(), Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	st.Dev, st.Ino, st.Ctime = sysStat(fi)
	return st
}

// Hashed reports whether Sum holds the content's SHA-256 (a racy stamp of
// a file read), not zero or the mark of content not read (MarkUnread).
func (s Stamp) Hashed() bool {
	return s.Sum != [sha256.Size]byte{} && !s.Unread()
}

// unread is Sum's mark of content not read: no readable content hashes to
// it, so a stamp holding it equals no later stamp of a readable file.
var unread = [sha256.Size]byte{1}

// MarkUnread marks the stamp as of content not read: a file that could
// not be read, or one whose reading the caller cannot vouch for.
func (s *Stamp) MarkUnread() { s.Sum = unread }

// Unread reports whether the stamp holds MarkUnread's mark.
func (s Stamp) Unread() bool { return s.Sum == unread }

// Settled reports whether the stamp's times alone tell this content from
// any later one: they are older than RacyWindow. A cache keyed by a stamp
// that is not settled must look at the content again.
func (s Stamp) Settled() bool {
	return s.Exists && !racy(s.Ctime, s.Mtime)
}

func racy(ctime, mtime int64) bool {
	now := time.Now().UnixNano()
	return now-ctime < int64(RacyWindow) || now-mtime < int64(RacyWindow)
}
