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
	if fault == "mount" {
		return unix.EPERM
	}
	return nil
}
