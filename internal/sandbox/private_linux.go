//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// probeNamespaces makes a user (or, for root, a plain) mount and PID
// namespace and its mounts once, without a command, and says what it found.
func probeNamespaces() (string, string) {
	kind := "user"
	if rootMounts() {
		kind = "root"
	}
	cause, err := startInit(initSpec{Probe: true, Fault: faultFromEnv()}, false, nil)
	switch {
	case cause != "":
		return "", cause
	case err != nil:
		return "", err.Error()
	}
	return kind, ""
}

// preparePrivate creates the profile's private folders and checks every
// one, and the two folders above them, before the sandbox names them:
// real folders (no link at any of them), owned by this user, writable by
// nobody else. Only the leaves are writable to the command, so it cannot
// rename one and put a link in its place; another local user who made
// /tmp/piagent-sandbox-UID first is refused, not followed.
func preparePrivate(p Profile) error {
	dirs := p.Dirs()
	if len(dirs) == 0 {
		return nil
	}
	hash := filepath.Dir(dirs[0])
	base := filepath.Dir(hash)
	for _, d := range append([]string{base, hash}, dirs...) {
		if err := ownDir(d); err != nil {
			return err
		}
	}
	return emptyFile(filepath.Join(hash, ".hidden-empty"))
}

// ownDir makes d (its parent must exist for the leaves; the base's parent
// is made as needed) and checks it.
func ownDir(d string) error {
	if err := os.MkdirAll(filepath.Dir(d), 0o700); err != nil {
		return fmt.Errorf("cannot create the sandbox's private folder %s: %w", filepath.Dir(d), err)
	}
	if err := unix.Mkdir(d, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("cannot create the sandbox's private folder %s: %w", d, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(d, &st); err != nil {
		return fmt.Errorf("the sandbox's private folder %s: %w", d, err)
	}
	var why []string
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		why = append(why, "is not a folder (a link or a file)")
	}
	if int(st.Uid) != os.Geteuid() {
		why = append(why, fmt.Sprintf("is owned by uid %d, not %d", st.Uid, os.Geteuid()))
	}
	if st.Mode&0o022 != 0 {
		why = append(why, fmt.Sprintf("is writable by others (mode %o)", st.Mode&0o777))
	}
	if len(why) > 0 {
		return fmt.Errorf("refusing the sandbox's private folder %s: it %s; nothing was run; remove it (rm -rf %s) and run again", d, strings.Join(why, " and "), d)
	}
	return nil
}

// emptyFile makes f an empty read-only regular file, never following or
// truncating anything already there.
func emptyFile(f string) error {
	var st unix.Stat_t
	if unix.Lstat(f, &st) == nil {
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == 0 && int(st.Uid) == os.Geteuid() {
			return nil
		}
		if err := unix.Unlink(f); err != nil {
			return fmt.Errorf("the sandbox's empty file %s: %w", f, err)
		}
	}
	fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("the sandbox's empty file %s: %w", f, err)
	}
	return unix.Close(fd)
}

func existing(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
