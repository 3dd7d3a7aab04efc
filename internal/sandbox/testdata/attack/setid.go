//go:build linux

package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// more carries out the set-ID and device attacks through the system calls
// Go's own wrappers do not use (x/sys's Chmod is fchmodat, Open is openat,
// Mkdir is mkdirat), so each seccomp rule is reached by its own call, and
// the io_uring calls that need a ring. known is false for a name it does
// not carry out.
func more(name string, arg func(int) string) (err error, known bool) {
	switch name {
	case "tioclinux-reaches":
		// TIOCLINUX on /dev/null: the kernel answers ENOTTY; only the
		// filter answers EPERM.
		fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
		if err != nil {
			return err, true
		}
		defer unix.Close(fd)
		sub := byte(2)
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCLINUX, uintptr(unsafePointer(&sub))); errno == unix.EPERM {
			return errno, true
		}
		return nil, true
	case "iouring-enter", "iouring-register":
		// With a ring from anywhere (an inherited one, a future way to
		// make one), these are the doors; without one the kernel answers
		// EBADF. Only the filter answers EPERM: the call did not reach
		// the kernel.
		nr := uintptr(unix.SYS_IO_URING_ENTER)
		if name == "iouring-register" {
			nr = unix.SYS_IO_URING_REGISTER
		}
		if _, _, errno := unix.Syscall6(nr, 1<<30, 0, 0, 0, 0, 0); errno == unix.EPERM {
			return errno, true
		}
		return nil, true
	case "setuid-fchmod":
		fd, err := unix.Open(arg(2), unix.O_RDONLY, 0)
		if err != nil {
			return err, true
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, 0o4755), true
	case "setuid-fchmodat2":
		p, err := unix.BytePtrFromString(arg(2))
		if err != nil {
			return err, true
		}
		// fchmodat2(AT_FDCWD, path, mode, flags): Linux 6.6.
		fd := unix.AT_FDCWD
		if _, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafePointer(p)), 0o4755, 0, 0, 0); errno != 0 {
			return errno, true
		}
		return requireSetID(arg(2)), true
	}
	return legacy(name, arg)
}

// requireSetID is an error unless p has the set-user-ID bit: a call that
// answered 0 without setting it did no harm.
func requireSetID(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_ISUID == 0 {
		return fmt.Errorf("%s has no set-user-ID bit", p)
	}
	return nil
}
