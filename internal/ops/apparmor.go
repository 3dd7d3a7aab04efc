package ops

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// AppArmorTarget is where the AppArmor profile is installed.
const AppArmorTarget = "/etc/apparmor.d/piagent"

// AppArmorProfile is the profile for the running binary, and for
// piagent-sandbox beside it when there (setup --apparmor). A binary the
// person (or anyone but root) can replace is refused: anything written
// there would then make namespaces.
func AppArmorProfile() (string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if p := replaceableBy(bin); p != "" {
		return "", refused(fmt.Errorf("%s can be replaced by someone other than root (%s is not root's alone); an AppArmor profile for it would let whatever is written there make user namespaces", bin, p),
			text("install piagent at a root-owned path first: sudo install -m 755 "+filepath.Join(filepath.Dir(bin), "piagent*")+" /usr/local/bin/, then run /usr/local/bin/piagent setup --apparmor"))
	}
	bins := []string{bin}
	if lean := filepath.Join(filepath.Dir(bin), "piagent-sandbox"); lean != bin {
		if _, err := os.Stat(lean); err == nil {
			if p := replaceableBy(lean); p != "" {
				return "", refused(fmt.Errorf("%s can be replaced by someone other than root (%s is not root's alone); an AppArmor profile for it would let whatever is written there make user namespaces", lean, p),
					text("install it as root's: sudo chown root: "+lean+" && sudo chmod 755 "+lean))
			}
			bins = append(bins, lean)
		}
	}
	return apparmorProfile(bins...), nil
}

// apparmorProfile is the profile that lets piagent's binaries (piagent,
// and piagent-sandbox beside it, which starts the sandbox when installed)
// make unprivileged user namespaces where Ubuntu restricts them
// (kernel.apparmor_restrict_unprivileged_userns=1): each runs unconfined
// by AppArmor otherwise, as it did before the restriction.
func apparmorProfile(bins ...string) string {
	var b strings.Builder
	b.WriteString("# piagent: lets the sandbox make its user namespace (piagent setup --apparmor)\nabi <abi/4.0>,\ninclude <tunables/global>\n")
	for _, bin := range bins {
		b.WriteString("\nprofile " + filepath.Base(bin) + " " + bin + " flags=(unconfined) {\n  userns,\n\n  include if exists <local/piagent>\n}\n")
	}
	return b.String()
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
