//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// legacyCases are the x86_64 calls arm64 has only as *at variants, and x32.
func legacyCases() []filterCase {
	const x32 = 0x40000000
	return []filterCase{
		{"chmod setuid", unix.SYS_CHMOD, []uint64{0, 0o4755}, errno(unix.EPERM)},
		{"chmod 0755", unix.SYS_CHMOD, []uint64{0, 0o755}, allow},
		{"open(O_CREAT) setuid", unix.SYS_OPEN, []uint64{0, unix.O_CREAT, 0o4755}, errno(unix.EPERM)},
		{"creat setgid", unix.SYS_CREAT, []uint64{0, 0o2755}, errno(unix.EPERM)},
		{"mkdir setgid", unix.SYS_MKDIR, []uint64{0, 0o2755}, errno(unix.EPERM)},
		{"mknod FIFO", unix.SYS_MKNOD, []uint64{0, unix.S_IFIFO | 0o600}, allow},
		{"mknod block device", unix.SYS_MKNOD, []uint64{0, unix.S_IFBLK | 0o600, 0x801}, errno(unix.EPERM)},
		{"mknod character device", unix.SYS_MKNOD, []uint64{0, unix.S_IFCHR | 0o600, 0x105}, errno(unix.EPERM)},
		{"mknod setuid file", unix.SYS_MKNOD, []uint64{0, unix.S_IFREG | 0o4755}, errno(unix.EPERM)},
		// x32 shares x86_64's audit arch, with bit 30 set in the number
		{"x32 socket", x32 | 41, []uint64{unix.AF_UNIX}, errno(unix.ENOSYS)},
		{"x32 read", x32 | unix.SYS_READ, nil, errno(unix.ENOSYS)},
	}
}

// foreignCases: i386 on x86_64 (socketcall is 102 there, socket 359, read
// 3) and an arm64 number for good measure.
func foreignCases() []foreignCase {
	kill := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	return []foreignCase{
		{"i386 socketcall", unix.AUDIT_ARCH_I386, 102, kill},
		{"i386 socket", unix.AUDIT_ARCH_I386, 359, kill},
		{"i386 read", unix.AUDIT_ARCH_I386, 3, kill},
		{"aarch64 read", unix.AUDIT_ARCH_AARCH64, 63, kill},
	}
}
