package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// `piagent setup` with the real Pi and the npm registry, in a fresh home:
// --check fails before and passes after; Pi then starts with the piagent
// extension and pi-mcp-adapter loaded from its own package list (no -e) and
// core seeded; a second run changes nothing; uninstall removes the two
// packages and leaves the approval store and the user's own server alone.
// npm's global prefix points into the test's folder, and nothing is written
// there: Pi 0.86 installs user packages under <agentDir>/npm.
func TestSetupRealPi(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	w := NewWorld(t)
	npmGlobal := filepath.Join(w.Dir, "npm-global")
	env := registryEnv()
	env["PIAGENT_PI"] = PiCLI()
	env["PIAGENT_BIN"] = bins.Piagent
	env["npm_config_prefix"] = npmGlobal
	piagent := func(args ...string) *PiRun {
		t.Helper()
		return w.RunProcess(append([]string{bins.Piagent}, args...), PiOptions{Mode: "print", Env: env, Timeout: 3 * time.Minute})
	}

	// The user's own server, and a decision about a repository server.
	w.WriteMCP(w.HomeFile(".config/mcp/mcp.json"), map[string]any{"mine": w.MarkerServer("mine")}, nil)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": w.MarkerServer("repo-tools")}, nil)
	if r := piagent("mcp", "approve", "repo-tools", "--yes"); r.ExitCode != 0 {
		t.Fatalf("approve: exit %d\n%s", r.ExitCode, r.Describe())
	}
	store := w.HomeFile(".pi/piagent-mcp-approvals.json")
	storeBefore := w.Read(store)
	if !strings.Contains(storeBefore, "repo-tools") {
		t.Fatalf("store after approve:\n%s", storeBefore)
	}

	if r := piagent("setup", "--check"); r.ExitCode != 1 {
		t.Fatalf("setup --check before setup: exit %d, want 1\n%s", r.ExitCode, r.Describe())
	}

	r := piagent("setup")
	if r.ExitCode != 0 {
		t.Fatalf("setup: exit %d\n%s\nstdout:\n%s", r.ExitCode, r.Describe(), r.Stdout)
	}
	for _, want := range []string{"ran: pi install " + w.HomeFile(".pi/piagent/extension/"), "ran: pi install npm:pi-mcp-adapter@2.36.0", "preset core (scope global", "github"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("setup stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	// Seeded only where its runtime is (issue 42, item 5): each of github
	// and chrome-devtools is added, or listed with what it needs.
	if !strings.Contains(r.Stderr, "github: Docker running") && !strings.Contains(r.Stdout, "github           not added: needs ") {
		t.Errorf("setup neither seeds github nor says what it needs:\n%s\n%s", r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout+r.Stderr, "npm notice") {
		t.Errorf("npm's update notice reached setup's output:\n%s", r.Stderr)
	}
	pkgs := settingsPackages(t, w)
	if len(pkgs) != 2 || !strings.Contains(pkgs[0], "piagent/extension/") || pkgs[1] != "npm:pi-mcp-adapter@2.36.0" {
		t.Fatalf("Pi's packages after setup = %q, want the extension then the adapter", pkgs)
	}
	if entries, err := os.ReadDir(npmGlobal); err == nil && len(entries) > 0 {
		t.Errorf("setup wrote into npm's global prefix %s: %v", npmGlobal, entries)
	}
	global := w.Read(w.HomeFile(".config/mcp/mcp.json"))
	for _, want := range []string{`"mine"`, `"context7"`} {
		if !strings.Contains(global, want) {
			t.Errorf("global mcp.json lacks %s:\n%s", want, global)
		}
	}
	for _, id := range []string{"chrome-devtools", "github"} {
		notAdded := strings.Contains(r.Stdout, fmt.Sprintf("  %-16s not added: needs ", id))
		if seeded := strings.Contains(global, `"`+id+`"`); seeded == notAdded {
			t.Errorf("%s: seeded %v, listed as not added %v; want exactly one:\n%s\n%s", id, seeded, notAdded, r.Stdout, global)
		}
	}

	// Pi starts from its own package list: the extension answers its
	// command, and the adapter's proxy tool is offered to the model. A
	// metadata cache keeps the adapter from connecting to core's servers.
	w.SeedCache()
	piEnv := map[string]string{"PIAGENT_BIN": bins.Piagent}
	base := []string{Node(), PiCLI(), "--no-session", "--provider", "fake", "--model", "fake-model"}
	w.StartLLM()
	cmd := w.RunProcess(append(slices.Clone(base), "-p", "/piagent-mcp"), PiOptions{Mode: "print", Env: piEnv})
	if cmd.ExitCode != 0 {
		t.Fatalf("pi -p /piagent-mcp: exit %d\n%s", cmd.ExitCode, cmd.Describe())
	}
	out := cmd.Stdout + cmd.Stderr
	for _, want := range []string{"/piagent-mcp subcommands", "context7", "repo-tools"} {
		if !strings.Contains(out, want) {
			t.Errorf("/piagent-mcp output lacks %q:\n%s", want, out)
		}
	}
	llm := w.StartLLM(Say("hello"))
	chat := w.RunProcess(append(slices.Clone(base), "--mode", "json", "Say hello"), PiOptions{Env: piEnv})
	if chat.ExitCode != 0 {
		t.Fatalf("pi --mode json: exit %d\n%s", chat.ExitCode, chat.Describe())
	}
	reqs := llm.Requests()
	if len(reqs) == 0 {
		t.Fatalf("the fake model got no request\n%s", chat.Describe())
	}
	if tools := reqs[0].ToolNames(); !slices.Contains(tools, "mcp") {
		t.Errorf("the model was offered %v, want the adapter's mcp proxy among them", tools)
	}
	if n := w.MarkerStarts("mine") + w.MarkerStarts("repo-tools"); n != 0 {
		t.Errorf("marker servers started %d times", n)
	}

	r = piagent("setup")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "no change") || strings.Contains(r.Stdout, "ran: ") {
		t.Errorf("second setup: exit %d, want 0 and \"no change\"\n%s", r.ExitCode, r.Stdout)
	}
	if r := piagent("setup", "--check"); r.ExitCode != 0 {
		t.Errorf("setup --check after setup: exit %d, want 0\n%s", r.ExitCode, r.Stdout)
	}

	r = piagent("uninstall")
	if r.ExitCode != 0 {
		t.Fatalf("uninstall: exit %d\n%s", r.ExitCode, r.Describe())
	}
	if pkgs := settingsPackages(t, w); len(pkgs) != 0 {
		t.Errorf("Pi's packages after uninstall = %q, want none", pkgs)
	}
	if got := w.Read(store); got != storeBefore {
		t.Errorf("uninstall changed the approval store:\nbefore %s\nafter  %s", storeBefore, got)
	}
	if got := w.Read(w.HomeFile(".config/mcp/mcp.json")); got != global {
		t.Errorf("uninstall changed the global config:\n%s", got)
	}
	if r := piagent("setup", "--check"); r.ExitCode != 1 {
		t.Errorf("setup --check after uninstall: exit %d, want 1", r.ExitCode)
	}
}

// registryEnv carries the variables npm needs to reach the registry from
// this machine (proxy, extra CA certificates); the world's environment
// leaves them out. With npm_config_prefix moved into the test's folder,
// npm no longer reads the global npmrc under the real prefix, so a CA file
// set there is passed on as npm_config_cafile.
func registryEnv() map[string]string {
	env := map[string]string{}
	for _, k := range []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
		"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
		"npm_config_registry", "npm_config_cafile", "npm_config_proxy", "npm_config_https_proxy"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if _, ok := env["npm_config_cafile"]; !ok {
		if f := os.Getenv("NODE_EXTRA_CA_CERTS"); f != "" {
			env["npm_config_cafile"] = f
		}
	}
	// Keep reading the machine's global npmrc (registry, CA file) even
	// though the prefix it is found under moves; the environment's
	// npm_config_prefix still wins over any prefix it sets.
	if _, ok := env["npm_config_globalconfig"]; !ok {
		if out, err := exec.Command("npm", "config", "get", "globalconfig").Output(); err == nil {
			if f := strings.TrimSpace(string(out)); f != "" {
				if _, err := os.Stat(f); err == nil {
					env["npm_config_globalconfig"] = f
				}
			}
		}
	}
	return env
}

// settingsPackages is the packages array of Pi's global settings, as sources.
func settingsPackages(t *testing.T, w *World) []string {
	t.Helper()
	var s struct {
		Packages []any `json:"packages"`
	}
	data := w.Read(filepath.Join(w.AgentDir, "settings.json"))
	if data == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, data)
	}
	var out []string
	for _, p := range s.Packages {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case map[string]any:
			src, _ := p["source"].(string)
			out = append(out, src)
		}
	}
	return out
}
