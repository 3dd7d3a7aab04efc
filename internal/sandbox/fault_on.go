//go:build linux && sandboxfault

package sandbox

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// faultFromEnv reads PIAGENT_SANDBOX_FAULT from piagent's own environment
// (this build only; the command's is filtered): "mount" makes the init's
// namespace unable to mount, as Ubuntu's AppArmor restriction does.
func faultFromEnv() string { return os.Getenv("PIAGENT_SANDBOX_FAULT") }

func faultMount(fault string) error {
	if faultHas(fault, "mount") {
		return unix.EPERM
	}
	return nil
}

// faultHas reports one of the comma-separated faults: "mount", "keep-caps"
// (the command keeps the init's capabilities), "no-tiocsti-rule" (the
// seccomp filter lacks its TIOCSTI and TIOCLINUX rules).
func faultHas(fault, name string) bool {
	for f := range strings.SplitSeq(fault, ",") {
		if f == name {
			return true
		}
	}
	return false
}

// faultDial reads PIAGENT_SANDBOX_DIAL ("HOST:PORT=ADDR,..."): the proxy
// dials ADDR for HOST:PORT, so that a test's local fake answers for a
// registry's name (this build only).
func faultDial() map[string]string {
	v := os.Getenv("PIAGENT_SANDBOX_DIAL")
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for kv := range strings.SplitSeq(v, ",") {
		if k, a, ok := strings.Cut(kv, "="); ok {
			m[k] = a
		}
	}
	return m
}
