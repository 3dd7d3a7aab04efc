package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
	"github.com/spf13/cobra"
)

// TestCreatedFilesRegistered runs every command that writes piagent's own
// state in a fake home, then walks ~/.pi: every file there must be in the
// registry, or an agent's tool call could rewrite it unnoticed. A new state
// file that is not registered fails here.
func TestCreatedFilesRegistered(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	for _, c := range [][]string{
		{"piagent-mcp", "approve", "repo", "--yes"},
		{"piagent-mcp", "reject", "repo"},
		{"piagent", "policy", "mode", "readOnly"},
		{"piagent", "extension", "path"},
		{"piagent", "launch-config"},
		{"piagent-mcp", "add", "other", "--scope", "global", "--url", "https://o.example/mcp"},
		{"piagent-mcp", "add", "pig", "--scope", "pi-global", "--url", "https://p.example/mcp"},
		{"piagent-mcp", "disable", "pig"},
	} {
		if _, errs, code := runCLI(t, c[0], home, proj, c[1:]...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, errs)
		}
	}
	g, err := gate.Load(gate.Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	set := registry.NewSet(g.Registry(nil, nil))
	files := 0
	err = filepath.WalkDir(filepath.Join(home, ".pi"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if _, ok := set.Match(p); !ok {
			t.Errorf("piagent created %s, which the registry does not list", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Errorf("only %d files under ~/.pi: the commands above did not run as meant", files)
	}
}

// TestDoctorListsRegistry: doctor --json carries the registry it protects.
func TestDoctorListsRegistry(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	out, errs, _ := runCLI(t, "piagent-mcp", home, proj, "doctor", "--json")
	var doc struct {
		Protected []registry.Entry `json:"protected"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, errs)
	}
	set := registry.NewSet(doc.Protected)
	for _, p := range []string{registry.ApprovalStore(home), registry.ModeStore(home), filepath.Join(proj, ".mcp.json")} {
		if _, ok := set.Match(p); !ok {
			t.Errorf("doctor --json protected lacks %s", p)
		}
	}
}

// A configuration file the adapter reads but piagent cannot (nesting beyond
// Go's decoder) is never taken as absent: every tool call is blocked.
func TestBeyondLimitsBlocks(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	deep := `{"mcpServers": {"hidden": {"command": "sh"}}, "x": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "piagent-mcp", home, proj, "list")
	if code != 1 || !strings.Contains(errs+out, "read by the adapter but not by piagent") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// TestExamples: every command that takes arguments shows an example
// (issue 23, item 8).
func TestExamples(t *testing.T) {
	t.Parallel()
	a := &app{env: Env{Home: "/h", Dir: "/p"}, name: "piagent"}
	root := a.rootCommand()
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		use := c.Use
		if _, rest, ok := strings.Cut(use, " "); ok && !c.Hidden && strings.ContainsAny(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			checked++
			if strings.TrimSpace(c.Example) == "" {
				t.Errorf("%s takes arguments (%s) but shows no example", c.CommandPath(), rest)
			}
		}
	}
	walk(root)
	if checked < 12 {
		t.Errorf("only %d commands with arguments found", checked)
	}
}

// Pi not found needs a person (exit 1), it is not bad usage (issue 23).
func TestPiNotFoundExit(t *testing.T) {
	t.Parallel()
	home, proj := fixture(t)
	var out, errb strings.Builder
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: proj, Home: home,
		Environ: []string{"HOME=" + home, "PATH=" + t.TempDir()}}
	if code := Main("piagent", []string{"pi"}, env); code != 1 || !strings.Contains(errb.String(), "pi not found") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
