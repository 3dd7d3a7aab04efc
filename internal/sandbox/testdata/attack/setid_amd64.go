//go:build linux && amd64

package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func unsafePointer(p *byte) unsafe.Pointer { return unsafe.Pointer(p) }

// legacy carries out the attacks through x86_64's old system calls, which
// arm64 does not have: chmod, open, creat, mkdir and mknod.
func legacy(name string, arg func(int) string) (error, bool) {
	call := func(nr uintptr, path string, a1, a2 uintptr) error {
		p, err := unix.BytePtrFromString(path)
		if err != nil {
			return err
		}
		r, _, errno := unix.Syscall(nr, uintptr(unsafe.Pointer(p)), a1, a2)
		if errno != 0 {
			return errno
		}
		if nr == unix.SYS_OPEN || nr == unix.SYS_CREAT {
			unix.Close(int(r))
		}
		return nil
	}
	switch name {
	case "setuid-chmod-legacy":
		if err := call(unix.SYS_CHMOD, arg(2), 0o4755, 0); err != nil {
			return err, true
		}
		return requireSetID(arg(2)), true
	case "setuid-open-legacy":
		if err := call(unix.SYS_OPEN, arg(2), unix.O_CREAT|unix.O_WRONLY, 0o4755); err != nil {
			return err, true
		}
		return requireSetID(arg(2)), true
	case "setuid-creat":
		if err := call(unix.SYS_CREAT, arg(2), 0o4755, 0); err != nil {
			return err, true
		}
		return requireSetID(arg(2)), true
	case "setuid-mkdir-legacy":
		return call(unix.SYS_MKDIR, arg(2), 0o4755|unix.S_ISGID, 0), true
	case "mknod-legacy":
		return call(unix.SYS_MKNOD, arg(2), unix.S_IFCHR|0o600, uintptr(unix.Mkdev(1, 3))), true
	}
	return nil, false
}
