package arch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The network code (net/http, crypto/tls and what they bring) is linked
// into piagent-netproxy alone: in piagent it made the guard's helper hold
// about 2 MB more of resident code (15.2–15.7 MiB against 13.1–13.3), and
// piagent-sandbox, which starts before every command, must not link even
// the net package (it would be a cgo binary, each start about 12 ms
// slower), nor os/user, for the same reason. The proxy's binary is the
// control: it must have them.
func TestNetworkCodeInItsOwnBinary(t *testing.T) {
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", "./cmd/"+pkg)
		cmd.Dir = "../.."
		cmd.Env = append(cmd.Environ(), "GOOS=linux")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./cmd/%s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	network := []string{"net/http", "crypto/tls"}
	for _, bin := range []string{"piagent", "piagent-mcp", "piagent-sandbox"} {
		d := deps(bin)
		for _, p := range network {
			if slices.Contains(d, p) {
				t.Errorf("%s links %s: the network proxy's code belongs in piagent-netproxy", bin, p)
			}
		}
		if bin == "piagent-sandbox" {
			// os/user (a user's home by name) makes it one too: read
			// /etc/passwd (safefile.HomeOf)
			for _, p := range []string{"net", "os/user", "runtime/cgo"} {
				if slices.Contains(d, p) {
					t.Errorf("piagent-sandbox links %s: it would be a cgo binary", p)
				}
			}
		}
	}
	d := deps("piagent-netproxy")
	for _, p := range network {
		if !slices.Contains(d, p) {
			t.Errorf("piagent-netproxy does not link %s: the test no longer sees what it looks for", p)
		}
	}
}
