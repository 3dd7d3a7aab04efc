//go:build linux

// Command attack carries out one system-level attack for the sandbox's
// tests: it exits 0 when the attack worked, 1 when it was refused (with
// the error), 2 on a usage error.
package main

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	arg := func(i int) string {
		if len(os.Args) <= i {
			fmt.Fprintln(os.Stderr, "usage: attack", os.Args[1], "needs more arguments")
			os.Exit(2)
		}
		return os.Args[i]
	}
	var err error
	switch os.Args[1] {
	case "iouring":
		// io_uring_setup(8, &params): a ring is the door to IORING_OP_SOCKET.
		var params [120]byte
		r, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 8, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(r))
		}
	case "keyctl":
		// the user keyring's id: the person's keys (and, on some systems,
		// Kerberos tickets) are in the keyrings the kernel shares
		_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
	case "add_key":
		_, err = unix.AddKey("user", "piagent-attack", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	case "prlimit":
		// another process's core-file limit raised: a later crash dumps its
		// memory where the command can read it
		pid, _ := strconv.Atoi(arg(2))
		lim := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
		err = unix.Prlimit(pid, unix.RLIMIT_CORE, &lim, nil)
	case "setpriority":
		pid, _ := strconv.Atoi(arg(2))
		err = unix.Setpriority(unix.PRIO_PROCESS, pid, 19)
	case "sched_setaffinity":
		pid, _ := strconv.Atoi(arg(2))
		var set unix.CPUSet
		set.Set(0)
		err = unix.SchedSetaffinity(pid, &set)
	case "mknod":
		err = unix.Mknod(arg(2), unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0)))
	case "mknod-char":
		err = unix.Mknod(arg(2), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3)))
	case "tiocsti":
		c := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			err = errno
		}
	case "tiocsti-high":
		// the request with high bits set: the kernel compares its low 32 bits
		c := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(0xdead<<32|unix.TIOCSTI), uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			err = errno
		}
	case "setuid-chmod":
		err = unix.Chmod(arg(2), 0o4755)
	case "setgid-fchmodat":
		err = unix.Fchmodat(unix.AT_FDCWD, arg(2), 0o2755, 0)
	case "setuid-open":
		var fd int
		fd, err = unix.Open(arg(2), unix.O_CREAT|unix.O_WRONLY, 0o4755)
		if err == nil {
			var st unix.Stat_t
			unix.Fstat(fd, &st)
			if st.Mode&unix.S_ISUID == 0 {
				err = fmt.Errorf("created without the setuid bit")
			}
		}
	case "setuid-mkdir":
		err = unix.Mkdir(arg(2), 0o4755|unix.S_ISGID)
	case "openat2":
		var fd int
		fd, err = unix.Openat2(unix.AT_FDCWD, arg(2), &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o644})
		if err == nil {
			unix.Close(fd)
		}
	case "write-fd":
		n, _ := strconv.Atoi(arg(2))
		_, err = unix.Write(n, []byte("planted through an inherited descriptor\n"))
	case "exchange":
		err = unix.Renameat2(unix.AT_FDCWD, arg(2), unix.AT_FDCWD, arg(3), unix.RENAME_EXCHANGE)
	case "openpty":
		// a new pseudo-terminal, as script(1), expect or Python's pty make
		err = openpty()
	case "environ":
		var b []byte
		b, err = os.ReadFile("/proc/" + arg(2) + "/environ")
		if err == nil && len(b) == 0 {
			err = fmt.Errorf("empty")
		}
	default:
		var known bool
		if err, known = more(os.Args[1], arg); !known {
			fmt.Fprintln(os.Stderr, "attack: unknown", os.Args[1])
			os.Exit(2)
		}
	}
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Println("worked")
}

// openpty makes a pseudo-terminal pair through /dev/ptmx and opens its
// terminal side.
func openpty() error {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(m)
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return err
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		return err
	}
	s, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	return unix.Close(s)
}
