//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter refuses what Landlock has no right for:
//
//   - socket(AF_UNIX): a confined command cannot ask an unconfined daemon
//     (docker.sock, the user's D-Bus, ssh-agent, tmux) to do its work;
//     socketpair(2) stays for stream and seqpacket pairs, which connect to
//     nothing outside; a datagram pair could sendto a named socket, and is
//     refused;
//   - io_uring_setup/enter/register: io_uring creates sockets and opens files
//     without the system calls below (IORING_OP_SOCKET), as Docker's default
//     profile refuses it too;
//   - openat2: its mode sits in a struct the filter cannot read; libc falls
//     back to openat on ENOSYS;
//   - a set-user-ID or set-group-ID bit in the mode of chmod, fchmod,
//     fchmodat, fchmodat2, open, openat, creat, mkdir, mkdirat, mknod and
//     mknodat (open(O_CREAT, 04755) makes a setuid file without any chmod);
//   - mknod and mknodat of a block or character device;
//   - ioctl TIOCSTI and TIOCLINUX, matched on the request's low 32 bits (the
//     kernel truncates it there): no typing into the person's terminal;
//   - keyctl, add_key, request_key: the kernel's keyrings are the host's;
//   - prlimit64, sched_setaffinity, sched_setscheduler, sched_setparam,
//     sched_setattr (pid argument), setpriority and ioprio_set (who
//     argument) naming another process than the caller.
//
// A foreign ABI (i386 on x86_64) is killed outright, and x32 system calls
// fail with ENOSYS, so no number can be reached by another door.

// sysRule refuses one system call: always (arg < 0), or when its argument
// arg (low 32 bits) matches.
type sysRule struct {
	nr    uint32
	arg   int    // -1: refuse every call
	mask  uint32 // the bits of arg looked at
	equal uint32 // refuse when arg&mask == equal; with any, when arg&mask != 0
	any   bool
	// notIn: refuse when arg&mask is none of these
	notIn []uint32
	errno unix.Errno
}

const setID = unix.S_ISUID | unix.S_ISGID

// seccompRules lists the filter's rules for this architecture.
func seccompRules() ([]sysRule, uint32, error) {
	var arch uint32
	var rules []sysRule
	modeAt := func(nr uint32, arg int) sysRule {
		return sysRule{nr: nr, arg: arg, mask: setID, any: true, errno: unix.EPERM}
	}
	device := func(nr uint32, arg int) []sysRule {
		return []sysRule{
			modeAt(nr, arg),
			{nr: nr, arg: arg, mask: unix.S_IFMT, equal: unix.S_IFBLK, errno: unix.EPERM},
			{nr: nr, arg: arg, mask: unix.S_IFMT, equal: unix.S_IFCHR, errno: unix.EPERM},
		}
	}
	rules = append(rules,
		sysRule{nr: unix.SYS_SOCKET, arg: 0, mask: 0xffffffff, equal: unix.AF_UNIX, errno: unix.EACCES},
		// A datagram pair may sendto, or connect again to, any named Unix
		// datagram socket (journald, /dev/log, systemd's notify socket).
		sysRule{nr: unix.SYS_SOCKETPAIR, arg: 1, mask: 0xf, equal: unix.SOCK_DGRAM, errno: unix.EACCES},
		// The kernel's keyrings are shared with the host: the person's keys,
		// Kerberos tickets in the persistent keyring (as Docker refuses).
		sysRule{nr: unix.SYS_KEYCTL, arg: -1, errno: unix.EPERM},
		sysRule{nr: unix.SYS_ADD_KEY, arg: -1, errno: unix.EPERM},
		sysRule{nr: unix.SYS_REQUEST_KEY, arg: -1, errno: unix.EPERM},
		// Another process's limits, priority or CPUs (Landlock has no hook
		// for them): a core-file limit raised and a CPU limit lowered make
		// Pi dump its memory where the command can read it. The command's
		// own (pid 0) stay its own.
		otherPid(unix.SYS_PRLIMIT64, 0),
		otherPid(unix.SYS_SCHED_SETAFFINITY, 0),
		otherPid(unix.SYS_SCHED_SETSCHEDULER, 0),
		otherPid(unix.SYS_SCHED_SETPARAM, 0),
		otherPid(unix.SYS_SCHED_SETATTR, 0),
		otherPid(unix.SYS_SETPRIORITY, 1),
		otherPid(unix.SYS_IOPRIO_SET, 1),
		sysRule{nr: unix.SYS_IO_URING_SETUP, arg: -1, errno: unix.EPERM},
		sysRule{nr: unix.SYS_IO_URING_ENTER, arg: -1, errno: unix.EPERM},
		sysRule{nr: unix.SYS_IO_URING_REGISTER, arg: -1, errno: unix.EPERM},
		sysRule{nr: unix.SYS_OPENAT2, arg: -1, errno: unix.ENOSYS},
		sysRule{nr: unix.SYS_IOCTL, arg: 1, mask: 0xffffffff, equal: unix.TIOCSTI, errno: unix.EPERM},
		sysRule{nr: unix.SYS_IOCTL, arg: 1, mask: 0xffffffff, equal: unix.TIOCLINUX, errno: unix.EPERM},
		modeAt(unix.SYS_FCHMOD, 1),
		modeAt(unix.SYS_FCHMODAT, 2),
		modeAt(unix.SYS_FCHMODAT2, 2),
		modeAt(unix.SYS_OPENAT, 3),
		modeAt(unix.SYS_MKDIRAT, 2),
	)
	rules = append(rules, device(unix.SYS_MKNODAT, 2)...)
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
		rules = append(rules, legacyRules()...)
		rules = append(rules, device(sysMknod, 1)...)
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, 0, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	return rules, arch, nil
}

// otherPid refuses system call nr when its argument arg, a pid, names
// another process than the caller (is not 0).
func otherPid(nr uint32, arg int) sysRule {
	return sysRule{nr: nr, arg: arg, mask: 0xffffffff, any: true, errno: unix.EPERM}
}

// networkRules are the filter's rules for a profile's network: none when
// it is on. Inside a network namespace of the command's own (the network
// off, or through the proxy), vsock sockets (no namespace separates them).
// With the network off and no namespace, every socket(2) whatever its
// family: a list of families would miss one that reaches the network
// another way (AF_SMC, AF_RDS, AF_TIPC, ...); socketpair(2) stays, and Unix
// sockets are refused anyway. Through the proxy without a namespace,
// Landlock lets TCP connect only to the proxy's port, and what Landlock
// does not govern is refused here: every family but IPv4, IPv6 and
// netlink, every datagram socket (UDP), every protocol but TCP's (SCTP,
// MPTCP).
func networkRules(off, registries, netns bool) []sysRule {
	vsock := sysRule{nr: unix.SYS_SOCKET, arg: 0, mask: 0xffffffff, equal: unix.AF_VSOCK, errno: unix.EACCES}
	switch {
	case !off && !registries:
		return nil
	case netns:
		return []sysRule{vsock}
	case off:
		return []sysRule{{nr: unix.SYS_SOCKET, arg: -1, errno: unix.EACCES}}
	}
	return []sysRule{
		{nr: unix.SYS_SOCKET, arg: 0, mask: 0xffffffff, notIn: []uint32{unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}, errno: unix.EACCES},
		{nr: unix.SYS_SOCKET, arg: 1, mask: 0xf, equal: unix.SOCK_DGRAM, errno: unix.EACCES},
		{nr: unix.SYS_SOCKET, arg: 2, mask: 0xffffffff, notIn: []uint32{0, unix.IPPROTO_TCP}, errno: unix.EACCES},
	}
}

// program assembles the filter. Each rule is a self-contained block that
// either returns an error or falls through to the next, so every jump is
// short and fixed.
func program(rules []sysRule, arch uint32, x32 bool) []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: nr at 0, arch at 4, args[i] at 16+8i (the low
	// word first on these little-endian machines).
	prog := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, Jf: 0, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
	}
	if x32 {
		// x32 system calls share the x86_64 audit arch with bit 30 set.
		prog = append(prog,
			unix.SockFilter{Code: ld, K: 0},
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000},
			unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		)
	}
	for _, r := range rules {
		deny := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(r.errno)}
		var block []unix.SockFilter
		switch {
		case r.arg < 0:
			block = []unix.SockFilter{deny}
		case len(r.notIn) > 0:
			block = []unix.SockFilter{{Code: ld, K: uint32(16 + 8*r.arg)}}
			if r.mask != 0xffffffff {
				block = append(block, unix.SockFilter{Code: and, K: r.mask})
			}
			for i, v := range r.notIn {
				block = append(block, unix.SockFilter{Code: jeq, Jt: uint8(len(r.notIn) - i), Jf: 0, K: v})
			}
			block = append(block, deny)
		case r.any:
			block = []unix.SockFilter{{Code: ld, K: uint32(16 + 8*r.arg)}, {Code: jset, Jt: 0, Jf: 1, K: r.mask}, deny}
		default:
			block = []unix.SockFilter{{Code: ld, K: uint32(16 + 8*r.arg)}}
			if r.mask != 0xffffffff {
				block = append(block, unix.SockFilter{Code: and, K: r.mask})
			}
			block = append(block, unix.SockFilter{Code: jeq, Jt: 0, Jf: 1, K: r.equal}, deny)
		}
		prog = append(prog, unix.SockFilter{Code: ld, K: 0}, unix.SockFilter{Code: jeq, Jt: 0, Jf: uint8(len(block)), K: r.nr})
		prog = append(prog, block...)
	}
	return append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW})
}

// filterProgram is the filter installSeccomp installs: this
// architecture's rules and extra (the network's), assembled.
func filterProgram(fault string, extra []sysRule) ([]unix.SockFilter, error) {
	rules, arch, err := seccompRules()
	if err != nil {
		return nil, err
	}
	rules = append(rules, extra...)
	if faultHas(fault, "no-tiocsti-rule") {
		rules = slices.DeleteFunc(rules, func(r sysRule) bool { return r.nr == unix.SYS_IOCTL })
	}
	return program(rules, arch, runtime.GOARCH == "amd64"), nil
}

// installSeccomp sets no_new_privs and installs the filter on this thread
// (no TSYNC: the thread that then forks or execs the command is the one
// confined).
func installSeccomp(fault string, extra []sysRule) error {
	prog, err := filterProgram(fault, extra)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}
