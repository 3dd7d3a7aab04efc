//go:build linux

// Command floor is what the sandbox's start is measured against
// (docs/performance.md): the least a Go program can do to start a command
// under the same kinds of confinement.
//
//	floor landlock DIR -- CMD...   one process: a Landlock ruleset (read
//	                               everywhere, write DIR) and a seccomp
//	                               filter on its thread, then execve
//	floor twoproc DIR -- CMD...    two processes, as piagent's sandbox is
//	                               made: this one starts itself in new user,
//	                               mount, PID and network namespaces; that
//	                               one binds / read-only and DIR writable,
//	                               mounts /proc, then does what landlock
//	                               does and starts the command, waits, and
//	                               ends with its status
package main

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 5 || os.Args[3] != "--" {
		fail("usage: floor landlock|twoproc|init DIR -- CMD...", nil)
	}
	dir, argv := os.Args[2], os.Args[4:]
	switch os.Args[1] {
	case "landlock":
		runtime.LockOSThread()
		confine(dir)
		fail("exec", unix.Exec(argv[0], argv, os.Environ()))
	case "twoproc":
		uid, gid := os.Getuid(), os.Getgid()
		pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"floor", "init", dir, "--"}, argv...), &syscall.ProcAttr{
			Env:   append([]string{"GOMAXPROCS=1"}, os.Environ()...),
			Files: []uintptr{0, 1, 2},
			Sys: &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
				AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
				Pdeathsig:   syscall.SIGKILL,
			},
		})
		if err != nil {
			fail("start the init", err)
		}
		os.Exit(wait(pid))
	case "init":
		runtime.LockOSThread()
		must("private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
		must("bind /", unix.Mount("/", "/", "", unix.MS_BIND|unix.MS_REC, ""))
		must("read-only /", unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}))
		must("bind dir", unix.Mount(dir, dir, "", unix.MS_BIND, ""))
		must("writable dir", unix.MountSetattr(unix.AT_FDCWD, dir, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}))
		must("proc", unix.Mount("proc", "/proc", "proc", 0, ""))
		confine(dir)
		pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
		if err != nil {
			fail("start the command", err)
		}
		os.Exit(wait(pid))
	}
	fail("usage: floor landlock|twoproc|init DIR -- CMD...", nil)
}

// confine applies Landlock (read and execute everywhere, write in dir) and
// a seccomp filter refusing ptrace to this thread.
func confine(dir string) {
	const read = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	const all = 1<<13 - 1
	attr := unix.LandlockRulesetAttr{Handled_access_fs: all}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Offsetof(attr.Handled_access_net), 0)
	if errno != 0 {
		fail("landlock", errno)
	}
	for _, r := range []struct {
		path   string
		access uint64
	}{{"/", read}, {dir, all}} {
		p, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		must("open "+r.path, err)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: r.access, Parent_fd: int32(p)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			fail("landlock rule", errno)
		}
		unix.Close(p)
	}
	must("no new privileges", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		fail("landlock restrict", errno)
	}
	// load the syscall number; ptrace: EPERM; anything else: allow
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_PTRACE},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		fail("seccomp", errno)
	}
}

func wait(pid int) int {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func must(what string, err error) {
	if err != nil {
		fail(what, err)
	}
}

func fail(what string, err error) {
	if err != nil {
		what += ": " + err.Error()
	}
	os.Stderr.WriteString("floor: " + what + "\n")
	os.Exit(125)
}
