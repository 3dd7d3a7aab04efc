package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// fixture is a home and project inside a temporary folder, so every
// registered path lies inside a writable folder, as in the attack tests.
func fixture(t *testing.T) Input {
	t.Helper()
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{filepath.Join(home, ".pi", "agent", "mcp-oauth"), filepath.Join(home, ".config", "mcp"), filepath.Join(proj, ".git", "hooks"), filepath.Join(proj, ".pi"), filepath.Join(proj, "certs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(proj, ".git", "config"):             "",
		filepath.Join(proj, ".env"):                       "A=1",
		filepath.Join(proj, ".env.example"):               "A=",
		filepath.Join(proj, "certs", "server.key"):        "k",
		filepath.Join(home, ".pi", "agent", "auth.json"):  "{}",
		filepath.Join(home, ".config", "mcp", "mcp.json"): "{}",
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	agent := filepath.Join(home, ".pi", "agent")
	// The whole root is granted, so that the home's registered paths lie
	// inside a writable folder too.
	return Input{Home: home, AgentDir: agent, Project: proj, ConfigDir: ".pi", TempDir: filepath.Join(root, "tmp"), Extra: []string{root},
		Registry: registry.List(registry.Input{Home: home, AgentDir: agent, Project: proj, ConfigDir: ".pi"})}
}

func TestAgentProfile(t *testing.T) {
	t.Parallel()
	in := fixture(t)
	p := Agent(in, nil)
	has := func(list []string, p string) bool { return slices.Contains(list, p) }
	home, proj := in.Home, in.Project
	for _, w := range []string{proj, in.Extra[0]} {
		if !has(p.Writable, w) {
			t.Errorf("writable lacks %s: %v", w, p.Writable)
		}
	}
	// The system temporary folders hold code other processes load later
	// (Pi's jiti cache, Node's compile cache): never writable.
	for _, w := range []string{in.TempDir, "/tmp", "/var/tmp"} {
		if has(p.Writable, w) {
			t.Errorf("writable has %s: %v", w, p.Writable)
		}
	}
	for _, ro := range []string{
		filepath.Join(proj, ".pi"), filepath.Join(proj, ".git", "hooks"), filepath.Join(proj, ".git", "config"),
		filepath.Join(home, ".config", "mcp", "mcp.json"), filepath.Join(home, ".pi", "agent", "auth.json"),
		filepath.Join(home, ".pi"), // the store does not exist yet: its folder is locked instead
	} {
		if !has(p.ReadOnly, ro) {
			t.Errorf("read-only lacks %s: %v", ro, p.ReadOnly)
		}
	}
	for _, pin := range []string{filepath.Join(proj, ".git"), home, filepath.Join(home, ".config")} {
		if !has(p.Pinned, pin) {
			t.Errorf("pinned lacks %s: %v", pin, p.Pinned)
		}
	}
	if has(p.Pinned, proj) || has(p.ReadOnly, proj) {
		t.Errorf("the project itself is locked: %v %v", p.Pinned, p.ReadOnly)
	}
	for _, h := range []string{filepath.Join(proj, ".env"), filepath.Join(proj, "certs", "server.key"), filepath.Join(home, ".pi", "agent", "auth.json")} {
		if !has(p.Hidden, h) {
			t.Errorf("hidden lacks %s: %v", h, p.Hidden)
		}
	}
	if has(p.Hidden, filepath.Join(proj, ".env.example")) {
		t.Error("an example file is hidden")
	}
	if !has(p.HiddenDirs, filepath.Join(home, ".pi", "agent", "mcp-oauth")) {
		t.Errorf("the adapter's tokens are not hidden: %v", p.HiddenDirs)
	}
	if !has(p.Unprotected, filepath.Join(proj, ".mcp.json")) {
		t.Errorf("a missing project file is not reported as unprotected: %v", p.Unprotected)
	}
	if !p.NoUnixSockets {
		t.Error("Unix sockets allowed")
	}
	for _, d := range p.Dirs() {
		if !paths.Within(PrivateDir(in.TempDir, "", proj), d) {
			t.Errorf("private folder %s is outside the project's private folder", d)
		}
	}
}

func TestSecretNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{".env": true, ".env.local": true, ".env.example": false, "tls.key": true, "cert.pem": true, "id_rsa": true, "main.go": false, "key.go": false} {
		if Secret(name) != want {
			t.Errorf("Secret(%q) = %v", name, !want)
		}
	}
}

// TestSetNetworkOff: with the network off, Go is told not to try the
// network (GOPROXY ends in off), keeping the person's module downloads as
// a file:// proxy; on, GOPROXY is the person's.
func TestSetNetworkOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		off  bool
		want string
	}{
		{[]string{"A=1", "GOPROXY=file:///m/cache/download,https://proxy.golang.org,direct"}, true, "GOPROXY=file:///m/cache/download,off"},
		{[]string{"GOPROXY=https://proxy.golang.org,direct"}, true, "GOPROXY=off"},
		{[]string{"GOPROXY=https://proxy.golang.org,direct"}, false, "GOPROXY=https://proxy.golang.org,direct"},
	} {
		p := Profile{Env: slices.Clone(tc.env)}
		p.SetNetworkOff(tc.off)
		if p.NetworkOff != tc.off || !slices.Contains(p.Env, tc.want) {
			t.Errorf("SetNetworkOff(%v) on %v: %v (off %v), want %s", tc.off, tc.env, p.Env, p.NetworkOff, tc.want)
		}
	}
}
