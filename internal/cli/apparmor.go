package cli

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/piagent/piagent/internal/ops"
)

// setupAppArmor prints the profile for this binary (ops.AppArmorProfile),
// or installs it through sudo when asked.
func (a *app) setupAppArmor(install bool) error {
	profile, err := ops.AppArmorProfile()
	if err != nil {
		return err
	}
	if !install {
		fmt.Fprint(a.env.Stdout, profile)
		fmt.Fprintf(a.env.Stderr, "\nto install it: piagent setup --apparmor > /tmp/piagent.apparmor && sudo install -m 644 /tmp/piagent.apparmor %s && sudo apparmor_parser -r %s\n(or: piagent setup --apparmor --install)\n", ops.AppArmorTarget, ops.AppArmorTarget)
		return nil
	}
	fmt.Fprintf(a.env.Stderr, "installing %s through sudo (it may ask for your password)\n", ops.AppArmorTarget)
	tee := exec.Command("sudo", "tee", ops.AppArmorTarget)
	tee.Stdin, tee.Stdout, tee.Stderr = strings.NewReader(profile), nil, a.env.Stderr
	if err := tee.Run(); err != nil {
		return refused(fmt.Errorf("could not write %s: %w", ops.AppArmorTarget, err))
	}
	load := exec.Command("sudo", "apparmor_parser", "-r", ops.AppArmorTarget)
	load.Stdout, load.Stderr = a.env.Stdout, a.env.Stderr
	if err := load.Run(); err != nil {
		return refused(fmt.Errorf("could not load %s: %w", ops.AppArmorTarget, err))
	}
	fmt.Fprintln(a.env.Stdout, "installed: 'piagent sandbox status' should now say namespaces: yes")
	return nil
}
