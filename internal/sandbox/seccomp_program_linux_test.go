//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data, what a filter reads of a system call.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// word is the 32-bit word at offset k, as BPF_LD|BPF_W|BPF_ABS loads it on
// a little-endian machine (the arguments' low word first).
func (d seccompData) word(k uint32) (uint32, bool) {
	switch {
	case k == 0:
		return d.nr, true
	case k == 4:
		return d.arch, true
	case k == 8 || k == 12: // the instruction pointer, which no rule reads
		return 0, true
	case k >= 16 && k < 64 && k%4 == 0:
		a := d.args[(k-16)/8]
		if (k-16)%8 == 4 {
			return uint32(a >> 32), true
		}
		return uint32(a), true
	}
	return 0, false
}

// runFilter runs a classic BPF program over d, as the kernel does a seccomp
// filter, and returns its action. Only the instructions program emits are
// known; any other fails the test, as does a jump or a load out of range.
func runFilter(t *testing.T, prog []unix.SockFilter, d seccompData) uint32 {
	t.Helper()
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	if len(prog) > unix.BPF_MAXINSNS {
		t.Fatalf("the filter has %d instructions; the kernel takes %d", len(prog), unix.BPF_MAXINSNS)
	}
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		jump := func(cond bool) {
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		}
		switch in.Code {
		case ld:
			w, ok := d.word(in.K)
			if !ok {
				t.Fatalf("instruction %d loads offset %d, outside seccomp_data", pc, in.K)
			}
			a = w
		case and:
			a &= in.K
		case jeq:
			jump(a == in.K)
		case jge:
			jump(a >= in.K)
		case jset:
			jump(a&in.K != 0)
		case ret:
			return in.K
		default:
			t.Fatalf("instruction %d: code %#x is not one the filter uses", pc, in.Code)
		}
	}
	t.Fatal("the filter runs off its end")
	return 0
}

// filterCase is one system call and the action the filter must take.
type filterCase struct {
	name string
	nr   uint32
	args []uint64
	want uint32
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

const allow = unix.SECCOMP_RET_ALLOW

// filterCases are the filter's decisions, written out by hand from the
// rules' comment, not derived from the rules: a rule taken out, or one
// that looks at the wrong argument or bits, changes an answer here.
func filterCases() []filterCase {
	const other = 4242 // another process's pid
	cases := []filterCase{
		{"read", unix.SYS_READ, nil, allow},
		{"socket(AF_UNIX)", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, errno(unix.EACCES)},
		{"socket(AF_UNIX) with high bits the kernel drops", unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_UNIX}, errno(unix.EACCES)},
		{"socket(AF_INET), network on", unix.SYS_SOCKET, []uint64{unix.AF_INET}, allow},
		{"socketpair stream", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
		{"socketpair datagram", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, errno(unix.EACCES)},
		{"keyctl", unix.SYS_KEYCTL, nil, errno(unix.EPERM)},
		{"add_key", unix.SYS_ADD_KEY, nil, errno(unix.EPERM)},
		{"request_key", unix.SYS_REQUEST_KEY, nil, errno(unix.EPERM)},
		{"prlimit64 of itself", unix.SYS_PRLIMIT64, []uint64{0}, allow},
		{"prlimit64 of another", unix.SYS_PRLIMIT64, []uint64{other}, errno(unix.EPERM)},
		{"sched_setaffinity of another", unix.SYS_SCHED_SETAFFINITY, []uint64{other}, errno(unix.EPERM)},
		{"sched_setscheduler of another", unix.SYS_SCHED_SETSCHEDULER, []uint64{other}, errno(unix.EPERM)},
		{"sched_setparam of another", unix.SYS_SCHED_SETPARAM, []uint64{other}, errno(unix.EPERM)},
		{"sched_setattr of another", unix.SYS_SCHED_SETATTR, []uint64{other}, errno(unix.EPERM)},
		{"sched_setattr of itself", unix.SYS_SCHED_SETATTR, []uint64{0}, allow},
		{"setpriority of another", unix.SYS_SETPRIORITY, []uint64{unix.PRIO_PROCESS, other}, errno(unix.EPERM)},
		{"setpriority of itself", unix.SYS_SETPRIORITY, []uint64{unix.PRIO_PROCESS, 0}, allow},
		{"ioprio_set of another", unix.SYS_IOPRIO_SET, []uint64{1, other}, errno(unix.EPERM)},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, nil, errno(unix.EPERM)},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER, nil, errno(unix.EPERM)},
		{"io_uring_register", unix.SYS_IO_URING_REGISTER, nil, errno(unix.EPERM)},
		{"openat2", unix.SYS_OPENAT2, nil, errno(unix.ENOSYS)},
		{"ioctl TIOCSTI", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, errno(unix.EPERM)},
		{"ioctl TIOCSTI with high bits the kernel drops", unix.SYS_IOCTL, []uint64{0, 1<<32 | unix.TIOCSTI}, errno(unix.EPERM)},
		{"ioctl TIOCLINUX", unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, errno(unix.EPERM)},
		{"ioctl TCGETS", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"fchmod 0755", unix.SYS_FCHMOD, []uint64{3, 0o755}, allow},
		{"fchmod setuid", unix.SYS_FCHMOD, []uint64{3, 0o4755}, errno(unix.EPERM)},
		{"fchmod setgid", unix.SYS_FCHMOD, []uint64{3, 0o2755}, errno(unix.EPERM)},
		{"fchmodat setuid", unix.SYS_FCHMODAT, []uint64{3, 0, 0o4755}, errno(unix.EPERM)},
		{"fchmodat2 setgid", unix.SYS_FCHMODAT2, []uint64{3, 0, 0o2755, 0}, errno(unix.EPERM)},
		{"openat(O_CREAT) 0644", unix.SYS_OPENAT, []uint64{3, 0, unix.O_CREAT, 0o644}, allow},
		{"openat(O_CREAT) setuid", unix.SYS_OPENAT, []uint64{3, 0, unix.O_CREAT, 0o4755}, errno(unix.EPERM)},
		{"mkdirat setgid", unix.SYS_MKDIRAT, []uint64{3, 0, 0o2755}, errno(unix.EPERM)},
		{"mkdirat 0755", unix.SYS_MKDIRAT, []uint64{3, 0, 0o755}, allow},
		{"mknodat FIFO", unix.SYS_MKNODAT, []uint64{3, 0, unix.S_IFIFO | 0o600}, allow},
		{"mknodat block device", unix.SYS_MKNODAT, []uint64{3, 0, unix.S_IFBLK | 0o600, 0x801}, errno(unix.EPERM)},
		{"mknodat character device", unix.SYS_MKNODAT, []uint64{3, 0, unix.S_IFCHR | 0o600, 0x105}, errno(unix.EPERM)},
		{"mknodat setuid file", unix.SYS_MKNODAT, []uint64{3, 0, unix.S_IFREG | 0o4755}, errno(unix.EPERM)},
	}
	return append(cases, legacyCases()...)
}

// foreignCase is a system call made through another ABI than the filter's.
type foreignCase struct {
	name     string
	arch, nr uint32
	want     uint32
}

// TestSeccompProgram asks the assembled filter, through a BPF interpreter,
// for each decision the package comment lists: each refusal with its
// errno, each near miss allowed, a foreign ABI killed outright (where this
// kernel has no such ABI to run a binary of, this is the test that holds
// that rule: issue 41, mutation SC-arch), x32 numbers refused, and the
// network-off rules with and without a network namespace.
func TestSeccompProgram(t *testing.T) {
	prog, err := filterProgram("", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, arch, _ := seccompRules()
	ask := func(t *testing.T, prog []unix.SockFilter, c filterCase) {
		t.Helper()
		d := seccompData{nr: c.nr, arch: arch}
		copy(d.args[:], c.args)
		if got := runFilter(t, prog, d); got != c.want {
			t.Errorf("%s: the filter answers %s, want %s", c.name, action(got), action(c.want))
		}
	}
	for _, c := range filterCases() {
		ask(t, prog, c)
	}
	for _, netns := range []bool{false, true} {
		off, err := filterProgram("", networkRules(true, false, netns))
		if err != nil {
			t.Fatal(err)
		}
		inet := errno(unix.EACCES)
		if netns {
			inet = allow // the namespace holds only the command's loopback
		}
		for _, c := range []filterCase{
			{"network off: socket(AF_INET)", unix.SYS_SOCKET, []uint64{unix.AF_INET}, inet},
			{"network off: socket(AF_INET6)", unix.SYS_SOCKET, []uint64{unix.AF_INET6}, inet},
			{"network off: socket(AF_PACKET)", unix.SYS_SOCKET, []uint64{unix.AF_PACKET}, inet},
			{"network off: socket(AF_XDP)", unix.SYS_SOCKET, []uint64{unix.AF_XDP}, inet},
			{"network off: socket(AF_NETLINK)", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK}, inet},
			{"network off: socket(AF_SMC)", unix.SYS_SOCKET, []uint64{unix.AF_SMC}, inet},
			{"network off: socket(AF_RDS)", unix.SYS_SOCKET, []uint64{unix.AF_RDS}, inet},
			{"network off: socket(AF_TIPC)", unix.SYS_SOCKET, []uint64{unix.AF_TIPC}, inet},
			{"network off: socket(AF_INET) with high bits the kernel drops", unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_INET}, inet},
			{"network off: socket(AF_VSOCK)", unix.SYS_SOCKET, []uint64{unix.AF_VSOCK}, errno(unix.EACCES)},
			{"network off: socketpair stream", unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
			{"network off: socket(AF_UNIX)", unix.SYS_SOCKET, []uint64{unix.AF_UNIX}, errno(unix.EACCES)},
			{"network off: read", unix.SYS_READ, nil, allow},
		} {
			c.name = fmt.Sprintf("%s (own namespace %v)", c.name, netns)
			ask(t, off, c)
		}
	}
	// Another ABI's numbers are not this one's: every call made through it
	// is killed, whatever its number, before any rule reads it.
	for _, c := range foreignCases() {
		d := seccompData{nr: c.nr, arch: c.arch}
		if got := runFilter(t, prog, d); got != c.want {
			t.Errorf("%s: the filter answers %s, want %s", c.name, action(got), action(c.want))
		}
	}
}

func action(a uint32) string {
	switch {
	case a == unix.SECCOMP_RET_ALLOW:
		return "allow"
	case a == unix.SECCOMP_RET_KILL_PROCESS:
		return "kill the process"
	case a&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "errno " + unix.ErrnoName(unix.Errno(a&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", a)
}

// BenchmarkSeccompInstall is the seccomp step's own cost, in one run: the
// whole filter (every rule of the ordinary-user and seams issues) built and
// installed, against a filter of one rule (what the floor installs): the
// median time of the install itself, the thread's start left out. Each
// install confines a thread of its own, which then ends (a goroutine that
// ends while locked to its thread takes the thread with it), so the
// benchmark's process stays unconfined.
func BenchmarkSeccompInstall(b *testing.B) {
	one := []sysRule{{nr: unix.SYS_PTRACE, arg: -1, errno: unix.EPERM}}
	for _, c := range []struct {
		name    string
		install func() error
	}{
		{"whole", func() error { return installSeccomp("", networkRules(false, true, true)) }},
		{"one-rule", func() error {
			_, arch, err := seccompRules()
			if err != nil {
				return err
			}
			prog := program(one, arch, false)
			fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				return err
			}
			if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
				return errno
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				done := make(chan error)
				go func() {
					runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
					start := time.Now()
					err := c.install()
					took = append(took, time.Since(start))
					done <- err
				}()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(took)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1000, "median-µs")
		})
	}
}
