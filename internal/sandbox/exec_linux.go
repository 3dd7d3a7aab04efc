//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MinABI is the oldest Landlock ABI the sandbox accepts: ABI 3 is the first
// that refuses truncating a read-only file.
const MinABI = 3

// Probe reports what this machine can enforce. It starts nothing.
func Probe() Status {
	st := Status{Seccomp: true}
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case err != nil:
		st.Missing = "the kernel has no Landlock (landlock_create_ruleset: " + err.Error() + "); Linux 5.13 or later with lsm=landlock is needed"
		return st
	case abi < MinABI:
		st.ABI = abi
		st.Missing = fmt.Sprintf("the kernel's Landlock ABI is %d; ABI %d (Linux 6.2) or later is needed", abi, MinABI)
		return st
	}
	st.Mechanism, st.ABI, st.Scoped = "landlock", abi, abi >= 6
	st.MountNamespace = canMount()
	return st
}

// canMount reports whether this process may make a private mount namespace
// without a user namespace: it holds CAP_SYS_ADMIN.
func canMount() bool {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0
}

// Exec confines this process by p and replaces it with argv (argv[0]
// looked up on PATH), with env. It returns only on failure, and then
// nothing was run.
func Exec(p Profile, argv, env []string) error {
	st := Probe()
	if st.Mechanism == "" {
		return &UnavailableError{Missing: st.Missing}
	}
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	for _, d := range p.Dirs() {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("cannot create the sandbox's private folder %s: %w", d, err)
		}
	}
	// Everything from here runs on this thread, which execve turns into
	// the new program: its mount namespace and filters are the program's.
	runtime.LockOSThread()
	if st.MountNamespace {
		if err := mountProfile(p, emptyFile(p)); err != nil {
			return fmt.Errorf("mount namespace: %w", err)
		}
	}
	if err := landlockProfile(p, st); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if p.NoUnixSockets {
		if err := denyUnixSockets(); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return syscall.Exec(path, argv, append(env, p.Env...))
}

func landlockProfile(p Profile, st Status) error {
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS}
	if st.Scoped {
		cfg.Scoped = landlock.V7.Scoped
	}
	if st.ABI < 7 {
		cfg = cfg.BestEffort() // ABI 3 to 6: every right that ABI knows
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(existing(p.Writable)...).WithRefer(),
		landlock.RWFiles(existing([]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"})...).WithIoctlDev(),
		landlock.RWDirs(existing([]string{"/dev/pts"})...).WithIoctlDev(),
	}
	for _, d := range p.Dirs() {
		rules = append(rules, landlock.RWDirs(d).WithRefer())
	}
	// The ruleset is enforced on this thread alone, which execve turns
	// into the command: no other thread of this process runs anything
	// after it, so there is no need to stop every thread (psx).
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("the ruleset restricts nothing")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return llsyscall.LandlockRestrictSelf(fd, flags)
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

// mountProfile makes a private mount namespace for this thread: registered
// paths inside writable folders read-only, the folders above them pinned
// (a mount point cannot be renamed or removed), secrets hidden.
func mountProfile(p Profile, empty string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	// Paths resolve from the working directory afresh once the mounts are
	// in place, or a relative path would bypass them.
	defer unix.Chdir(cwd)
	// Nothing mounted here may reach the rest of the machine.
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make / a slave mount: %w", err)
	}
	bind := func(src, dst string, ro bool) error {
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", dst, err)
		}
		if !ro {
			return nil
		}
		var sfs unix.Statfs_t
		flags := uintptr(0)
		if unix.Statfs(dst, &sfs) == nil {
			flags = uintptr(sfs.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
		}
		if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
			return fmt.Errorf("read-only %s: %w", dst, err)
		}
		return nil
	}
	// Pins first, outermost first, so the read-only mounts sit inside them.
	for _, d := range p.Pinned {
		if err := bind(d, d, false); err != nil {
			return err
		}
	}
	for _, f := range p.ReadOnly {
		if err := bind(f, f, true); err != nil {
			return err
		}
	}
	for _, f := range p.Hidden {
		// an empty read-only file, not /dev/null: a write to it must fail,
		// not vanish
		if err := bind(empty, f, true); err != nil {
			return err
		}
	}
	for _, d := range p.HiddenDirs {
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "size=4k,mode=0500"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	return nil
}

// emptyFile is an empty, read-only regular file in the profile's private
// folder, bound over each hidden file.
func emptyFile(p Profile) string {
	dirs := p.Dirs()
	if len(dirs) == 0 {
		return "/dev/null"
	}
	f := filepath.Join(filepath.Dir(dirs[0]), ".hidden-empty")
	if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return f
	}
	os.Remove(f)
	if err := os.WriteFile(f, nil, 0o444); err != nil {
		return "/dev/null"
	}
	return f
}

// denyUnixSockets installs a seccomp filter that fails socket(AF_UNIX, …)
// with EACCES. socketpair(2) is untouched: it makes no connection to
// anything outside.
func denyUnixSockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: nr at 0, arch at 4, args[0] (low word) at 16.
	prog := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, Jf: 0, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, // a foreign ABI could bypass the numbers below
		{Code: ld, K: 0},
		{Code: jeq, Jt: 0, Jf: 3, K: uint32(unix.SYS_SOCKET)},
		{Code: ld, K: 16},
		{Code: jeq, Jt: 0, Jf: 1, K: unix.AF_UNIX},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	if runtime.GOARCH == "amd64" {
		// x32 system calls share the x86_64 audit arch with bit 30 set.
		prog = append(prog[:4], append([]unix.SockFilter{
			{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000},
			{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		}, prog[4:]...)...)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}
