//go:build linux

package sandbox

import (
	"errors"
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock's rights, by the ABI that brought them.
const (
	llRead    = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llFile    = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	llABI1    = 1<<13 - 1 // execute … make_sym
	llDevices = ll.AccessFSMakeChar | ll.AccessFSMakeBlock
)

func handledFS(abi int) uint64 {
	h := uint64(llABI1)
	if abi >= 2 {
		h |= ll.AccessFSRefer
	}
	if abi >= 3 {
		h |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		h |= ll.AccessFSIoctlDev
	}
	return h
}

// llRule is one path-beneath rule: a folder or file, and what it allows.
type llRule struct {
	path   string
	access uint64
	file   bool
}

// openNoFollow opens path as an O_PATH descriptor without following a
// symbolic link at any component: a link planted on the way is refused,
// never followed to a place the agent chose.
func openNoFollow(path string, extra int) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   uint64(unix.O_PATH | unix.O_CLOEXEC | extra),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("%s is reached through a symbolic link; the sandbox opens its folders without following links", path)
	}
	if err != nil {
		return -1, &pathError{"open", path, err}
	}
	return fd, nil
}

type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// restrictLandlock enforces rules on this thread: everything is readable,
// each rule grants its rights beneath its path, and no other write is
// possible. Each path is opened without following links.
func restrictLandlock(abi int, rules []llRule) error {
	handled := handledFS(abi)
	attr := ll.RulesetAttr{HandledAccessFS: handled}
	if abi >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	rs, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(rs)
	for _, r := range rules {
		extra := unix.O_DIRECTORY
		if r.file {
			extra = 0
		}
		fd, err := openNoFollow(r.path, extra)
		if err != nil {
			return err
		}
		access := r.access & handled
		if r.file {
			access &= llFile
		}
		err = ll.LandlockAddPathBeneathRule(rs, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("landlock rule for %s: %w", r.path, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return ll.LandlockRestrictSelf(rs, 0)
}

// rulesOf lists the Landlock rules of p: / readable, the writable folders
// and private folders writable (no devices: mknod of a block or character
// device is refused by seccomp as well), and the harmless devices. pts is
// set where the command has a private pseudo-terminal instance of its own:
// without one, the person's terminals stay out of its reach.
func rulesOf(p Profile, pts bool) []llRule {
	rw := uint64(1<<16-1) &^ (llDevices | ll.AccessFSIoctlDev)
	rules := []llRule{{path: "/", access: llRead}}
	for _, d := range existing(p.Writable) {
		rules = append(rules, llRule{path: d, access: rw})
	}
	for _, d := range p.Dirs() {
		rules = append(rules, llRule{path: d, access: rw})
	}
	dev := uint64(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)
	for _, f := range existing([]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
		rules = append(rules, llRule{path: f, access: dev, file: true})
	}
	if pts {
		rules = append(rules, llRule{path: "/dev/ptmx", access: dev, file: true}, llRule{path: "/dev/pts", access: dev})
	}
	return rules
}
