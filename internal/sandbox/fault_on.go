//go:build linux && sandboxfault

package sandbox

import (
	"strings"

	"golang.org/x/sys/unix"
)

// faultFromEnv reads PIAGENT_SANDBOX_FAULT from the command's environment
// (this build only): "mount" makes the init's namespace unable to mount, as
// Ubuntu's AppArmor restriction does.
func faultFromEnv(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PIAGENT_SANDBOX_FAULT="); ok {
			return v
		}
	}
	return ""
}

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
