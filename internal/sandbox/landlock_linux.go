//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"github.com/piagent/piagent/internal/paths"
	"golang.org/x/sys/unix"
)

// Landlock's rights, by the ABI that brought them.
const (
	llRead    = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llFile    = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llABI1    = 1<<13 - 1 // execute … make_sym
	llDevices = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
)

// The three Landlock system calls, on this thread alone. (go-landlock's
// wrappers link libpsx, which makes every binary that imports them a cgo
// binary: about 10 ms more CPU at each sandbox start on a small machine,
// for all-thread calls the sandbox never makes. It restricts the one
// thread that starts the command.)

// landlockABI is the kernel's Landlock ABI version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

func landlockCreateRuleset(attr *unix.LandlockRulesetAttr) (int, error) {
	// Only the fields in use are passed: a kernel refuses a struct longer
	// than its own unless the rest is zero, and one older than ABI 6 has no
	// scopes.
	size := unsafe.Offsetof(attr.Handled_access_net)
	if attr.Handled_access_net != 0 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	if attr.Scoped != 0 {
		size = unsafe.Offsetof(attr.Quiet_access_fs)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), size, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func landlockAddPathBeneath(ruleset int, attr *unix.LandlockPathBeneathAttr) error {
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func landlockRestrictSelf(ruleset int) error {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func handledFS(abi int) uint64 {
	h := uint64(llABI1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// llRule is one path-beneath rule: a folder or file, and what it allows.
type llRule struct {
	path   string
	access uint64
	file   bool
	// optional: a path that is gone by the time the rule is made (an
	// entry of a folder listed for readRules) is passed over
	optional bool
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

// landlockNetPortAttr is struct landlock_net_port_attr (ABI 4), which
// x/sys does not define.
type landlockNetPortAttr struct {
	allowed uint64
	port    uint64
}

const landlockRuleNetPort = 2

// restrictLandlock enforces rules on this thread: everything is readable,
// each rule grants its rights beneath its path, and no other write is
// possible. Each path is opened without following links. With connect
// non-nil (ABI 4 and later), TCP may connect only to those ports, on any
// address: Landlock filters connect(2) by port alone.
func restrictLandlock(abi int, rules []llRule, connect []int) error {
	handled := handledFS(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if connect != nil {
		if abi < MinNetABI {
			return fmt.Errorf("the kernel's Landlock ABI is %d; TCP rules need ABI %d (Linux 6.7)", abi, MinNetABI)
		}
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	rs, err := landlockCreateRuleset(&attr)
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
		if err != nil && r.optional {
			continue
		}
		if err != nil {
			return err
		}
		access := r.access & handled
		if r.file {
			access &= llFile
		}
		err = landlockAddPathBeneath(rs, &unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)})
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("landlock rule for %s: %w", r.path, err)
		}
	}
	for _, port := range connect {
		a := landlockNetPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), landlockRuleNetPort, uintptr(unsafe.Pointer(&a)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock rule for TCP port %d: %w", port, errno)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return landlockRestrictSelf(rs)
}

// readRules grant reading all but the secret paths denied: / and each
// folder on the way to a denied path may be listed, and each other entry
// of those folders read, with all beneath it. Landlock keys a rule to a
// file, not to a name: a file that appears in one of those folders while
// the command runs (a store a person's tool creates, or renames over the
// one hidden by a mount) has no rule, and stays unreadable.
//
// Each listed folder (one the policy opens in part, ~/.config/git) is read
// the same way: a file that appears in it later is not one it opened.
func readRules(denied, listed []string) []llRule {
	if len(denied) == 0 && len(listed) == 0 {
		return []llRule{{path: "/", access: llRead}}
	}
	for i, d := range denied {
		denied[i] = resolveExisting(d)
	}
	isDenied := func(x string) bool {
		return slices.ContainsFunc(denied, func(d string) bool { return paths.Within(d, x) })
	}
	var chain []string
	walk := func(from string) {
		for a := from; ; a = filepath.Dir(a) {
			if !slices.Contains(chain, a) && !isDenied(a) {
				chain = append(chain, a)
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	for _, d := range denied {
		walk(filepath.Dir(d))
	}
	for _, l := range listed {
		walk(resolveExisting(l))
	}
	slices.Sort(chain)
	rules := []llRule{{path: "/", access: unix.LANDLOCK_ACCESS_FS_READ_DIR}}
	for _, dir := range chain {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // nothing there to read, now or later
		}
		for _, e := range entries {
			c := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 || slices.Contains(chain, c) || isDenied(c) {
				continue // a link's target has a rule where it lies
			}
			rules = append(rules, llRule{path: c, access: llRead, file: !e.IsDir(), optional: true})
		}
	}
	return rules
}

// resolveExisting is p with the links of its longest existing prefix
// resolved: the path the kernel reaches.
func resolveExisting(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// rulesOf lists the Landlock rules of p: / readable but the secret paths, the writable folders
// and private folders writable (no devices: mknod of a block or character
// device is refused by seccomp as well), and the harmless devices. pts is
// set where the command has a private pseudo-terminal instance of its own:
// without one, the person's terminals stay out of its reach.
func rulesOf(p Profile, pts bool) []llRule {
	rw := uint64(1<<16-1) &^ (llDevices | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	rules := readRules(append(append([]string{}, p.Denied...), p.Absent...), p.Listed)
	for _, d := range existing(p.Writable) {
		rules = append(rules, llRule{path: d, access: rw})
	}
	for _, d := range p.Dirs() {
		rules = append(rules, llRule{path: d, access: rw})
	}
	dev := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	for _, f := range existing([]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
		rules = append(rules, llRule{path: f, access: dev, file: true})
	}
	if pts {
		rules = append(rules, llRule{path: "/dev/ptmx", access: dev, file: true}, llRule{path: "/dev/pts", access: dev})
	}
	return rules
}
