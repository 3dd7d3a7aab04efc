package safefile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// UnsafeError is a file or folder piagent must not trust: someone other
// than the person owns it or may write it. Fix is the command that makes it
// the person's again.
type UnsafeError struct {
	Path string
	Why  string
	Fix  string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s %s, so piagent does not trust it; fix: %s", e.Path, e.Why, e.Fix)
}

func (e *UnsafeError) Unwrap() error { return ErrUnsafe }

// person is whose files piagent trusts: this process's effective user
// (a variable for tests).
var person = func() (uid, gid int) { return os.Geteuid(), os.Getegid() }

// Check applies OpenSSH's StrictModes rule to a file piagent keeps its
// state in, and to its folder: owned by the person (a folder may also be
// root's); group-writable only
// when the group is the person's own private group with no other members;
// never writable by others. A link is followed and what it leads to is
// checked with its folder. A missing file passes when its folder does.
func Check(path string) error {
	real, err := resolve(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	fi, err := os.Lstat(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return check(real, fi, fi.IsDir())
}

// CheckFolder checks a folder piagent keeps code-bearing files in (Pi's
// temporary folder, a cache): the folder itself must be a real folder, no
// link, the person's or root's, writable by no one else (Check's rule); the
// folder above it must keep others from replacing it: the person's or
// root's and writable by no one else, or root's with the sticky bit, as
// /tmp is (others may add entries there but not rename or remove this
// one). A missing folder passes.
func CheckFolder(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if !fi.IsDir() {
		return &UnsafeError{Path: dir, Why: "is not a folder (a link or a file)",
			Fix: fmt.Sprintf("check what it is, then move it aside (mv %s %s.foreign)", dir, dir)}
	}
	if err := check(dir, fi, true); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	pfi, err := os.Stat(parent)
	if err != nil {
		return err
	}
	if uid, _, known := owner(pfi); known && uid == 0 && pfi.Mode()&fs.ModeSticky != 0 {
		return nil
	}
	return check(parent, pfi, true)
}

// checkDir checks the folder a state file is in; a missing folder passes
// (nothing is in it to trust).
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	return check(dir, fi, true)
}

func check(path string, fi fs.FileInfo, dir bool) error {
	perm := fi.Mode().Perm()
	chmod := "chmod 600 " + path
	if dir {
		chmod = "chmod 700 " + path
	}
	uid, gid, known := owner(fi)
	me, myGid := person()
	// A folder may also be root's, as OpenSSH allows: root can change
	// anything anyway. A file must be the person's.
	if known && int(uid) != me && !(dir && uid == 0) {
		return &UnsafeError{Path: path, Why: fmt.Sprintf("is owned by uid %d, not by you (uid %d)", uid, me),
			Fix: fmt.Sprintf("check what it holds, then move it aside and let piagent make a new one (mv %s %s.foreign), or chown %d %s", path, path, me, path)}
	}
	if perm&0o002 != 0 {
		return &UnsafeError{Path: path, Why: fmt.Sprintf("is writable by every user (mode %04o)", perm), Fix: chmod}
	}
	if perm&0o020 != 0 && !(known && int(gid) == myGid && privateGroup(me, myGid)) {
		return &UnsafeError{Path: path, Why: fmt.Sprintf("is writable by its group (mode %04o), which is not your own private group", perm), Fix: chmod}
	}
	return nil
}

// privateGroup reports whether gid is uid's own group: named as the user,
// listing no member but the user in /etc/group, and no other user's
// primary group in /etc/passwd. Anything unreadable answers false.
func privateGroup(uid, gid int) bool {
	users := readDB("/etc/passwd")
	name := ""
	for _, f := range users {
		if len(f) >= 4 && f[2] == strconv.Itoa(uid) {
			name = f[0]
			break
		}
	}
	if name == "" {
		return false
	}
	for _, f := range users {
		if len(f) >= 4 && f[3] == strconv.Itoa(gid) && f[0] != name {
			return false
		}
	}
	for _, f := range readDB("/etc/group") {
		if len(f) < 4 || f[2] != strconv.Itoa(gid) {
			continue
		}
		if f[0] != name {
			return false
		}
		for _, m := range strings.Split(f[3], ",") {
			if m != "" && m != name {
				return false
			}
		}
		return true
	}
	return false
}

// HomeOf is the home folder /etc/passwd gives the user called name
// (git's ~NAME/), read without the C library's lookup, so that the
// binaries that read it stay static: false for a user it does not list.
func HomeOf(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, f := range readDB("/etc/passwd") {
		if len(f) >= 6 && f[0] == name && f[5] != "" {
			return f[5], true
		}
	}
	return "", false
}

// readDB splits a colon-separated database of /etc; nil when unreadable.
func readDB(path string) [][]string {
	data, err := Read(path, Options{Max: 16 << 20})
	if err != nil {
		return nil
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		out = append(out, strings.Split(line, ":"))
	}
	return out
}
