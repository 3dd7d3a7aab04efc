package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Seatbelt writes p as a macOS sandbox profile (SBPL, for
// `sandbox-exec -p`). Seatbelt can deny a path inside an allowed folder,
// which Landlock cannot, so every registered path is denied for writing
// wherever it lies, the project's included, and the secrets for reading.
// In SBPL the last matching rule wins: the general allowances come first,
// the denials after them.
//
// The paths must be the real ones (macOS's /tmp is /private/tmp): Exec
// resolves them before it calls this.
func Seatbelt(p Profile) string {
	var b strings.Builder
	b.WriteString(";; piagent " + p.Name + " profile, generated from piagent's registry and the project\n")
	b.WriteString("(version 1)\n")
	b.WriteString("(allow default)\n")
	b.WriteString(";; writes only beneath the writable folders\n")
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*\n")
	for _, w := range p.Writable {
		fmt.Fprintf(&b, "  (subpath %s)\n", quote(w))
	}
	for _, d := range p.Dirs() {
		fmt.Fprintf(&b, "  (subpath %s)\n", quote(d))
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"} {
		fmt.Fprintf(&b, "  (literal %s)\n", quote(dev))
	}
	b.WriteString("  (regex #\"^/dev/ttys[0-9]+$\"))\n")
	if len(p.Protected) > 0 {
		b.WriteString(";; every file and folder that decides what runs: never written\n")
		b.WriteString("(deny file-write*\n")
		for _, e := range sortedPaths(p.Protected) {
			fmt.Fprintf(&b, "  %s\n", filter(e))
		}
		b.WriteString(")\n")
	}
	secrets := sortedPaths(append(pathsOf(p.Hidden, false), pathsOf(p.HiddenDirs, true)...))
	secrets = append(secrets, sortedPaths(deniedOnly(p))...)
	if len(secrets) > 0 {
		b.WriteString(";; credentials and the project's secrets: never read\n")
		b.WriteString("(deny file-read*\n")
		for _, e := range secrets {
			fmt.Fprintf(&b, "  %s\n", filter(e))
		}
		b.WriteString(")\n")
	}
	if p.NoUnixSockets {
		b.WriteString(";; no connection to a daemon outside the sandbox\n")
		b.WriteString("(deny network-outbound (remote unix-socket))\n")
	}
	if p.NetworkOff {
		// macOS has no network namespace: loopback is the machine's, so
		// every IP connection is refused, loopback's too.
		b.WriteString(";; no network: no IP connection, not even to this machine's loopback\n")
		b.WriteString("(deny network-outbound (remote ip))\n")
	}
	return b.String()
}

// deniedOnly are the Denied paths not already hidden, and the Absent
// ones: a rule names a path, whatever appears there later.
func deniedOnly(p Profile) []Path {
	var out []Path
	for _, d := range p.Denied {
		if !slices.Contains(p.Hidden, d) && !slices.Contains(p.HiddenDirs, d) {
			out = append(out, Path{Path: d})
		}
	}
	for _, a := range p.Absent {
		out = append(out, Path{Path: a, Dir: true})
	}
	return out
}

func pathsOf(ps []string, dir bool) []Path {
	out := make([]Path, 0, len(ps))
	for _, p := range ps {
		out = append(out, Path{Path: p, Dir: dir})
	}
	return out
}

func sortedPaths(ps []Path) []Path {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Path) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b Path) bool { return a.Path == b.Path })
}

func filter(e Path) string {
	if e.Dir {
		return "(subpath " + quote(e.Path) + ")"
	}
	return "(literal " + quote(e.Path) + ")"
}

// quote writes s as an SBPL string: backslash and double quote escaped,
// control characters as hexadecimal escapes.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
