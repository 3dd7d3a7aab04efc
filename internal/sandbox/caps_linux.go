//go:build linux

package sandbox

import (
	"golang.org/x/sys/unix"
)

// Securebits that keep a dropped capability dropped: root gains none at
// execve, a setuid change keeps none, no ambient capability can be raised,
// and each bit is locked.
const (
	secbitNoroot            = 1 << 0
	secbitNorootLocked      = 1 << 1
	secbitNoSetuidFixup     = 1 << 2
	secbitNoSetuidFixupLock = 1 << 3
	secbitKeepCapsLocked    = 1 << 5
	secbitNoCapAmbientRaise = 1 << 6
	secbitNoCapAmbientLock  = 1 << 7
)

// dropCaps drops every capability of this thread, whatever its uid: the
// bounding set, the ambient set, and the permitted, effective and
// inheritable sets, with the securebits locked so that an execve (of a
// setuid-root file, or by root) gains none back. Where this thread may not
// change the bounding set (no CAP_SETPCAP: an ordinary user without a user
// namespace), it holds no capability to drop and no_new_privs keeps execve
// from granting any.
func dropCaps() error {
	setpcap := haveCap(unix.CAP_SETPCAP)
	if setpcap {
		bits := secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLock |
			secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientLock
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return err
		}
		// every capability this kernel knows: PR_CAPBSET_DROP fails with
		// EINVAL past the last
		for c := 0; c < 64; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if err == unix.EINVAL {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

func haveCap(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}
