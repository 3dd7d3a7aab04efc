package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictModes holds Check and Read{Own} to OpenSSH's rule: the
// person's file, never writable by every user, writable by its group only
// when the group is the person's own private group; ~/.pi likewise. The
// person is swapped for another uid or gid to stand for a file another
// user owns, which an ordinary user cannot make. Not parallel: it swaps
// person.
func TestStrictModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".pi")
	os.Mkdir(dir, 0o700)
	p := filepath.Join(dir, "state.json")
	os.WriteFile(p, []byte("{}"), 0o600)
	uid, gid := os.Geteuid(), os.Getegid()
	read := func() error {
		if err := Check(p); err != nil {
			return err
		}
		_, err := Read(p, Options{Own: true})
		return err
	}
	if err := read(); err != nil {
		t.Fatalf("the person's own file: %v", err)
	}
	unsafe := func(what, names, fix string) {
		t.Helper()
		err := read()
		var ue *UnsafeError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafe) {
			t.Fatalf("%s: %v, want an UnsafeError", what, err)
		}
		if ue.Path != names || !strings.Contains(err.Error(), fix) {
			t.Errorf("%s: %v, want it to name %s and %q", what, err, names, fix)
		}
		if _, err := Read(p, Options{}); err != nil {
			t.Errorf("%s: read as a file that is not piagent's own: %v", what, err)
		}
	}

	os.Chmod(p, 0o666)
	unsafe("world-writable file", p, "chmod 600 "+p)
	os.Chmod(p, 0o600)

	os.Chmod(dir, 0o777)
	unsafe("world-writable ~/.pi", dir, "chmod 700 "+dir)
	os.Chmod(dir, 0o1777) // sticky does not help: anyone may create the file
	unsafe("world-writable sticky ~/.pi", dir, "chmod 700 "+dir)
	os.Chmod(dir, 0o700)

	defer func(old func() (int, int)) { person = old }(person)
	person = func() (int, int) { return uid + 1, gid }
	if uid == 0 {
		unsafe("a file another user owns", p, "chown") // its folder is root's, which a folder may be
	} else {
		unsafe("a file another user owns", dir, "chown") // its folder is the first thing checked
	}
	person = func() (int, int) { return uid, gid }

	os.Chmod(p, 0o660)
	if privateGroup(uid, gid) {
		if err := read(); err != nil {
			t.Errorf("group-writable by the person's own private group: %v", err)
		}
	} else {
		unsafe("group-writable, the group not private", p, "chmod 600 "+p)
	}
	person = func() (int, int) { return uid, gid + 1 }
	unsafe("group-writable by a group not the person's", p, "chmod 600 "+p)
	person = func() (int, int) { return uid, gid }
	os.Chmod(p, 0o600)

	// a link is followed, and what it leads to is checked
	other := filepath.Join(t.TempDir(), "dotfiles")
	os.Mkdir(other, 0o777)
	os.Chmod(other, 0o777)
	real := filepath.Join(other, "state.json")
	os.WriteFile(real, []byte("{}"), 0o600)
	os.Remove(p)
	os.Symlink(real, p)
	unsafe("a link into a world-writable folder", p, "chmod 700 "+other)
	os.Chmod(other, 0o700)
	if err := read(); err != nil {
		t.Errorf("a link to the person's own file: %v", err)
	}
}
