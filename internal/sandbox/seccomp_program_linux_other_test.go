//go:build linux && !amd64

package sandbox

import "golang.org/x/sys/unix"

func legacyCases() []filterCase { return nil }

// foreignCases: 32-bit ARM on arm64 (socket is 281 there, read 3).
func foreignCases() []foreignCase {
	kill := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	return []foreignCase{
		{"arm socket", unix.AUDIT_ARCH_ARM, 281, kill},
		{"arm read", unix.AUDIT_ARCH_ARM, 3, kill},
	}
}
