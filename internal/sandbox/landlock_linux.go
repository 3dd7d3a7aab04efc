//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

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
	// parent, when set, is the folder path lies in, opened once for all
	// its entries: each is then one component to resolve, not a path
	parent string
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
	parents := map[string]int{}
	defer func() {
		for _, fd := range parents {
			unix.Close(fd)
		}
	}()
	for _, r := range rules {
		extra := unix.O_DIRECTORY
		if r.file {
			extra = 0
		}
		var fd int
		var err error
		if r.parent != "" {
			fd, err = openEntry(parents, r.parent, filepath.Base(r.path), extra)
		} else {
			fd, err = openNoFollow(r.path, extra)
		}
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

// openEntry opens name in folder parent as openNoFollow opens a path: the
// folder once (kept in parents), the entry beneath it without following a
// link.
func openEntry(parents map[string]int, parent, name string, extra int) (int, error) {
	pfd, ok := parents[parent]
	if !ok {
		var err error
		if pfd, err = openNoFollow(parent, unix.O_DIRECTORY); err != nil {
			return -1, err
		}
		parents[parent] = pfd
	}
	fd, err := unix.Openat2(pfd, name, &unix.OpenHow{
		Flags:   uint64(unix.O_PATH | unix.O_CLOEXEC | extra),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, &pathError{"open", filepath.Join(parent, name), err}
	}
	return fd, nil
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
func readRules(denied, absent, listed []string) []llRule {
	if len(denied) == 0 && len(absent) == 0 && len(listed) == 0 {
		return []llRule{{path: "/", access: llRead}}
	}
	resolved := map[string]string{}
	off := map[string]bool{} // the paths no rule may cover
	var froms []string       // the folders whose way up is listed alone
	for _, d := range denied {
		d = resolveExisting(d, resolved)
		off[d] = true
		froms = append(froms, filepath.Dir(d))
	}
	// An absent store's own name needs no look: nothing is there to read
	// now, and what appears later has no rule.
	for _, d := range absent {
		dir := resolveExisting(filepath.Dir(d), resolved)
		off[filepath.Join(dir, filepath.Base(d))] = true
		froms = append(froms, dir)
	}
	for _, l := range listed {
		froms = append(froms, resolveExisting(l, resolved))
	}
	// The folders on the way: never a path that is off (a store within a
	// hidden one, ~/.kube/config in ~/.kube, leads through it).
	chain := map[string]bool{}
	for _, from := range froms {
		for a := from; !chain[a]; a = filepath.Dir(a) {
			if !off[a] {
				chain[a] = true
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	rules := []llRule{{path: "/", access: unix.LANDLOCK_ACCESS_FS_READ_DIR}}
	for _, dir := range slices.Sorted(maps.Keys(chain)) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // nothing there to read, now or later
		}
		for _, e := range entries {
			c := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 || chain[c] || off[c] {
				continue // a link's target has a rule where it lies
			}
			rules = append(rules, llRule{path: c, access: llRead, file: !e.IsDir(), optional: true, parent: dir})
		}
	}
	return rules
}

// resolveExisting is p with the links of its longest existing prefix
// resolved: the path the kernel reaches. memo keeps each folder's answer
// (the stores share a few: the home, ~/.config).
func resolveExisting(p string, memo map[string]string) string {
	if r, ok := memo[p]; ok {
		return r
	}
	r := p
	if d := filepath.Dir(p); d != p {
		r = filepath.Join(resolveExisting(d, memo), filepath.Base(p))
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if e, err := filepath.EvalSymlinks(r); err == nil {
				r = e
			}
		}
	}
	memo[p] = r
	return r
}

// rulesOf lists the Landlock rules of p: / readable but the secret paths, the writable folders
// and private folders writable (no devices: mknod of a block or character
// device is refused by seccomp as well), and the harmless devices. pts is
// set where the command has a private pseudo-terminal instance of its own:
// without one, the person's terminals stay out of its reach.
func rulesOf(p Profile, pts bool) []llRule {
	rw := uint64(1<<16-1) &^ (llDevices | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	rules := readRules(p.Denied, p.Absent, p.Listed)
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
