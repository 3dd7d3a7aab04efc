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

// TestCheckFolder: a folder of code-bearing files must be the person's (or
// root's), writable by no one else, and in a folder that keeps others from
// replacing it: private, or root's and sticky like /tmp.
func TestCheckFolder(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "mine")
	os.Mkdir(mine, 0o700)
	if err := CheckFolder(mine); err != nil {
		t.Errorf("a private folder in a private folder: %v", err)
	}
	if err := CheckFolder(filepath.Join(root, "absent")); err != nil {
		t.Errorf("an absent folder: %v", err)
	}
	shared, err := os.MkdirTemp("", "safefile-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shared)
	if fi, err := os.Stat(filepath.Dir(shared)); err == nil && fi.Mode()&os.ModeSticky != 0 {
		if err := CheckFolder(shared); err != nil {
			t.Errorf("a private folder in the sticky %s: %v", filepath.Dir(shared), err)
		}
	}
	refused := func(what, dir, names string) {
		t.Helper()
		var ue *UnsafeError
		if err := CheckFolder(dir); !errors.As(err, &ue) || ue.Path != names {
			t.Errorf("%s: %v, want an UnsafeError naming %s", what, err, names)
		}
	}
	os.Chmod(mine, 0o777)
	refused("a world-writable folder", mine, mine)
	os.Chmod(mine, 0o700)
	link := filepath.Join(root, "link")
	os.Symlink(mine, link)
	refused("a link", link, link)
	os.Chmod(root, 0o777) // not sticky: anyone may rename mine and put theirs there
	refused("a private folder in an open folder", mine, root)
	os.Chmod(root, 0o1777) // sticky, but not root's
	if os.Geteuid() != 0 {
		refused("a private folder in a sticky folder not root's", mine, root)
	}
	os.Chmod(root, 0o700)
}

// TestHomeOf: a user /etc/passwd lists has its home; an unknown or empty
// name has none.
func TestHomeOf(t *testing.T) {
	if h, ok := HomeOf("root"); !ok || h == "" {
		t.Errorf("root: %q %v", h, ok)
	}
	for _, n := range []string{"", "no-such-user-piagent", "root:x"} {
		if h, ok := HomeOf(n); ok {
			t.Errorf("%q: %q", n, h)
		}
	}
}
