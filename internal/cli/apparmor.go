package cli

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// apparmorProfile is the profile that lets piagent's binaries (piagent,
// and piagent-sandbox beside it, which starts the sandbox when installed)
// make unprivileged user namespaces where Ubuntu restricts them
// (kernel.apparmor_restrict_unprivileged_userns=1): each runs unconfined
// by AppArmor otherwise, as it did before the restriction.
func apparmorProfile(bins ...string) string {
	var b strings.Builder
	b.WriteString("# piagent: lets the sandbox make its user namespace (piagent setup --apparmor)\nabi <abi/4.0>,\ninclude <tunables/global>\n")
	for _, bin := range bins {
		fmt.Fprintf(&b, "\nprofile %s %s flags=(unconfined) {\n  userns,\n\n  include if exists <local/piagent>\n}\n", filepath.Base(bin), bin)
	}
	return b.String()
}

// apparmorTarget is where the profile is installed.
const apparmorTarget = "/etc/apparmor.d/piagent"

// setupAppArmor prints the profile for this binary, or installs it through
// sudo when asked. A binary the person (or anyone but root) can replace is
// refused: anything written there would then make namespaces.
func (a *app) setupAppArmor(install bool) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if p := replaceableBy(bin); p != "" {
		return refused(fmt.Errorf("%s can be replaced by someone other than root (%s is not root's alone); an AppArmor profile for it would let whatever is written there make user namespaces", bin, p),
			"install piagent at a root-owned path first: sudo install -m 755 "+filepath.Join(filepath.Dir(bin), "piagent*")+" /usr/local/bin/, then run /usr/local/bin/piagent setup --apparmor")
	}
	bins := []string{bin}
	if lean := filepath.Join(filepath.Dir(bin), "piagent-sandbox"); lean != bin {
		if _, err := os.Stat(lean); err == nil {
			if p := replaceableBy(lean); p != "" {
				return refused(fmt.Errorf("%s can be replaced by someone other than root (%s is not root's alone); an AppArmor profile for it would let whatever is written there make user namespaces", lean, p),
					"install it as root's: sudo chown root: "+lean+" && sudo chmod 755 "+lean)
			}
			bins = append(bins, lean)
		}
	}
	profile := apparmorProfile(bins...)
	if !install {
		fmt.Fprint(a.env.Stdout, profile)
		fmt.Fprintf(a.env.Stderr, "\nto install it: piagent setup --apparmor > /tmp/piagent.apparmor && sudo install -m 644 /tmp/piagent.apparmor %s && sudo apparmor_parser -r %s\n(or: piagent setup --apparmor --install)\n", apparmorTarget, apparmorTarget)
		return nil
	}
	fmt.Fprintf(a.env.Stderr, "installing %s through sudo (it may ask for your password)\n", apparmorTarget)
	tee := exec.Command("sudo", "tee", apparmorTarget)
	tee.Stdin, tee.Stdout, tee.Stderr = strings.NewReader(profile), nil, a.env.Stderr
	if err := tee.Run(); err != nil {
		return refused(fmt.Errorf("could not write %s: %w", apparmorTarget, err))
	}
	load := exec.Command("sudo", "apparmor_parser", "-r", apparmorTarget)
	load.Stdout, load.Stderr = a.env.Stdout, a.env.Stderr
	if err := load.Run(); err != nil {
		return refused(fmt.Errorf("could not load %s: %w", apparmorTarget, err))
	}
	fmt.Fprintln(a.env.Stdout, "installed: 'piagent sandbox status' should now say namespaces: yes")
	return nil
}

// replaceableBy names the first of bin and its folders that someone other
// than root owns or may write, or "" when root's alone.
func replaceableBy(bin string) string {
	for p := bin; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return p
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		// a sticky folder (/tmp) lets no one else rename what root owns in it
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return p
		}
		if p == filepath.Dir(p) {
			return ""
		}
	}
}
