package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/safefile"
)

// A lock is a file that exists only while someone holds it: created with
// O_CREAT|O_EXCL beside the file it guards, holding its holder's pid and
// start time, removed on release. Unlike flock(2), which works on any
// descriptor, read-only ones included, taking one needs the right to create
// a file in the folder, which the sandbox withholds from every command the
// agent runs (~/.pi is read-only there): an agent cannot hold piagent's
// locks. A lock whose holder is gone (killed, the pid reused) is stale and
// taken over; one that is held is waited for, up to a bound, and then an
// error names the holder.

// DefaultWait is how long a person's command waits for a lock.
const DefaultWait = 10 * time.Second

// LockOptions says how long to wait for a lock and whom to tell.
type LockOptions struct {
	// Wait bounds the wait; 0 means DefaultWait, a negative value one try.
	Wait time.Duration
	// Waiting, when set, is called once if the lock is still held after
	// a short while, with a description of the holder ("pid 123
	// (piagent-mcp)"), so that a person is not left without a word.
	Waiting func(holder string)
}

// LockedError is a lock still held when the wait ended.
type LockedError struct {
	Path   string // the lock file
	Holder string
	Waited time.Duration
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is held by %s; gave up after %v", e.Path, e.Holder, e.Waited.Round(time.Millisecond))
}

// ErrLocked matches a *LockedError.
var ErrLocked = errors.New("lock held")

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// staleEmpty is how old a lock file without a holder must be to count as
// stale: its holder writes the line right after creating it.
const staleEmpty = 2 * time.Second

// Lock takes the lock file at path, creating its folder (0700). The
// returned release removes it, if it is still the one taken.
func Lock(path string, o LockOptions) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	wait := o.Wait
	if wait == 0 {
		wait = DefaultWait
	}
	start := time.Now()
	told := false
	pause := 2 * time.Millisecond
	for {
		rel, err := tryLock(path)
		if err == nil {
			return rel, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("take the lock %s: %w", path, err)
		}
		h := inspect(path)
		if h.stale {
			breakStale(path, h)
			continue
		}
		waited := time.Since(start)
		if waited >= wait {
			return nil, &LockedError{Path: path, Holder: h.String(), Waited: waited}
		}
		if !told && o.Waiting != nil && waited >= 500*time.Millisecond {
			o.Waiting(h.String())
			told = true
		}
		time.Sleep(min(pause, wait-waited))
		pause = min(pause*2, 100*time.Millisecond)
	}
}

// self is this process's line in a lock file.
func self() string {
	return strconv.Itoa(os.Getpid()) + " " + strconv.FormatUint(startTime(os.Getpid()), 10) + "\n"
}

func tryLock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|nofollow, 0o600)
	if err != nil {
		return nil, err
	}
	fi, statErr := f.Stat()
	_, werr := f.WriteString(self())
	cerr := f.Close()
	if err := errors.Join(statErr, werr, cerr); err != nil {
		os.Remove(path)
		return nil, err
	}
	ino := safefile.FromInfo(fi).Ino
	return func() {
		if now, err := os.Lstat(path); err == nil && safefile.FromInfo(now).Ino == ino {
			os.Remove(path)
		}
	}, nil
}

// holder is what a lock file says of who holds it.
type holder struct {
	pid   int
	start uint64
	ino   uint64
	stale bool
	what  string // when there is no pid to name
}

func (h holder) String() string {
	if h.pid <= 0 {
		return h.what
	}
	s := "pid " + strconv.Itoa(h.pid)
	if name := command(h.pid); name != "" {
		s += " (" + name + ")"
	}
	return s
}

// inspect reads the lock file at path: its holder, and whether the holder
// is gone.
func inspect(path string) holder {
	fi, err := os.Lstat(path)
	if err != nil {
		return holder{stale: false, what: "a process that just released it"} // gone: try again
	}
	h := holder{ino: safefile.FromInfo(fi).Ino, what: "a lock file with no holder in it"}
	data, err := safefile.Read(path, safefile.Options{Max: 256})
	fields := strings.Fields(string(data))
	if err != nil || len(fields) != 2 {
		// being written, or not a lock piagent wrote (an earlier
		// version's, a planted file): stale once old enough
		h.stale = time.Since(fi.ModTime()) > staleEmpty
		return h
	}
	pid, perr := strconv.Atoi(fields[0])
	start, serr := strconv.ParseUint(fields[1], 10, 64)
	if perr != nil || serr != nil || pid <= 0 {
		h.stale = time.Since(fi.ModTime()) > staleEmpty
		return h
	}
	h.pid, h.start = pid, start
	h.stale = !alive(pid, start)
	return h
}

// alive reports whether pid runs and is the process that took the lock
// (same start time, where the system says).
func alive(pid int, start uint64) bool {
	if gone(pid) {
		return false
	}
	now := startTime(pid)
	return now == 0 || start == 0 || now == start
}

// breakStale removes the stale lock file at path that inspect found as h,
// under a second lock (path+".break") so that two processes breaking it at
// once cannot remove a fresh lock taken in between. Under that lock the
// file is inspected again and removed only if it still is the same dead
// holder's: its inode alone does not say so, for the file system gives a
// freed inode number to the next file made, and a lock taken since (its
// holder alive, or just made and not yet written) may have h's inode.
func breakStale(path string, h holder) {
	b := path + ".break"
	f, err := os.OpenFile(b, os.O_WRONLY|os.O_CREATE|os.O_EXCL|nofollow, 0o600)
	if err != nil {
		// another process is breaking it; one that died doing so left
		// this behind, and breaking takes microseconds
		if fi, err := os.Lstat(b); err == nil && time.Since(fi.ModTime()) > staleEmpty {
			os.Remove(b)
		}
		time.Sleep(time.Millisecond)
		return
	}
	f.Close()
	defer os.Remove(b)
	if now := inspect(path); now.stale && now.ino == h.ino && now.pid == h.pid && now.start == h.start {
		os.Remove(path)
	}
}

// StartTime is process pid's start time as the system counts it (0 where
// it cannot tell): with the pid, it names one process across pid reuse.
func StartTime(pid int) uint64 { return startTime(pid) }

// Running reports whether the process pid that started at start (from
// StartTime) still runs.
func Running(pid int, start uint64) bool { return alive(pid, start) }
