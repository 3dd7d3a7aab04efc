//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

const sysMknod = unix.SYS_MKNOD

// legacyRules are the x86_64 system calls that arm64 has only as *at
// variants: chmod, open, creat, mkdir (mknod is with the device rules).
func legacyRules() []sysRule {
	mode := func(nr uint32, arg int) sysRule {
		return sysRule{nr: nr, arg: arg, mask: setID, any: true, errno: unix.EPERM}
	}
	return []sysRule{mode(unix.SYS_CHMOD, 1), mode(unix.SYS_OPEN, 2), mode(unix.SYS_CREAT, 1), mode(unix.SYS_MKDIR, 1)}
}
