package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/piagent/piagent/internal/mcpconfig"
)

// A config case is one txtar file in testdata/config: a home ("home/…"), a
// project ("project/…") and anything else, laid out under a temporary root.
// Its comment holds "key: value" lines:
//
//	cwd: project/sub               where Pi starts (default project)
//	env: NAME=value                one environment variable (repeatable)
//	mcp-config: home/launcher.json the --mcp-config path
//	servers: a b c                 the servers the adapter must load, sorted
//
// The servers line keeps each case honest: if the adapter stops loading what
// the case was written to exercise, the case fails before it compares
// anything. In file contents @WORK@ is the root and @HOME@ the home.
type configCase struct {
	name       string
	root       string
	home       string
	cwd        string
	env        map[string]string
	configPath string
	servers    []string
}

func loadConfigCase(t *testing.T, file string) configCase {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ar := txtar.Parse(raw)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := configCase{
		name: strings.TrimSuffix(filepath.Base(file), ".txtar"),
		root: root,
		home: filepath.Join(root, "home"),
		cwd:  filepath.Join(root, "project"),
		env:  map[string]string{},
	}
	c.env["HOME"] = c.home
	sawServers := false
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(key, " \t") {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "cwd":
			c.cwd = filepath.Join(root, val)
		case "env":
			k, v, _ := strings.Cut(val, "=")
			c.env[k] = strings.ReplaceAll(strings.ReplaceAll(v, "@WORK@", root), "@HOME@", c.home)
		case "mcp-config":
			c.configPath = filepath.Join(root, val)
		case "servers":
			sawServers = true
			c.servers = strings.Fields(val)
			if !slices.IsSorted(c.servers) {
				t.Fatalf("%s: servers line is not sorted", file)
			}
		}
	}
	if !sawServers {
		t.Fatalf("%s: no servers line in the comment", file)
	}
	for _, d := range []string{c.home, c.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range ar.Files {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := bytes.ReplaceAll(f.Data, []byte("@WORK@"), []byte(root))
		data = bytes.ReplaceAll(data, []byte("@HOME@"), []byte(c.home))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// adapterResult is what load-config.mjs prints.
type adapterResult struct {
	Config struct {
		McpServers map[string]any `json:"mcpServers"`
		Settings   map[string]any `json:"settings"`
	} `json:"config"`
	Provenance json.RawMessage `json:"provenance"`
}

func runAdapter(t *testing.T, c configCase) (adapterResult, string) {
	t.Helper()
	args := []string{Fixture("load-config.mjs"), deps.npmDir, c.cwd}
	if c.configPath != "" {
		args = append(args, c.configPath)
	}
	cmd := exec.Command(deps.node, args...)
	cmd.Dir = c.cwd
	cmd.Env = []string{"PATH=" + deps.nodeBin}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("load-config.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var res adapterResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("load-config.mjs output: %v\n%s", err, stdout.String())
	}
	return res, stderr.String()
}

// viaJSON turns v into what encoding/json would make of its JSON form, so
// that piagent's values compare with the adapter's JSON: []string and []any,
// ints and float64, nil and absent-by-omission all meet in the middle.
func viaJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal piagent value: %v", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func runPiagentReader(t *testing.T, c configCase) (servers, settings any) {
	t.Helper()
	env := c.env
	view, err := mcpconfig.Load(mcpconfig.Options{
		Home:       c.home,
		Cwd:        c.cwd,
		Getenv:     func(k string) string { return env[k] },
		ConfigPath: c.configPath,
	})
	if err != nil {
		t.Fatalf("mcpconfig.Load: %v", err)
	}
	loaded := map[string]mcpconfig.Entry{}
	for _, s := range view.Servers {
		if !s.AdapterLoads {
			continue
		}
		if _, dup := loaded[s.Name]; dup {
			t.Errorf("piagent lists two servers named %q that the adapter loads", s.Name)
		}
		loaded[s.Name] = s.Entry
	}
	var set any = map[string]any{}
	if len(view.Settings) > 0 {
		set = viaJSON(t, view.Settings)
	}
	return viaJSON(t, loaded), set
}

// TestDifferentialConfig checks piagent's config reader against the adapter's
// own loadMcpConfig: for each case, the merged map of servers the adapter
// loads (piagent's entries with AdapterLoads) and the merged settings must be
// equal.
func TestDifferentialConfig(t *testing.T) {
	requireE2E(t)
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no config cases in testdata/config (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			c := loadConfigCase(t, file)
			res, stderr := runAdapter(t, c)

			names := make([]string, 0, len(res.Config.McpServers))
			for n := range res.Config.McpServers {
				names = append(names, n)
			}
			sort.Strings(names)
			if !slices.Equal(names, c.servers) {
				t.Fatalf("the case no longer exercises what it says: the adapter loads %q, the servers line says %q\nadapter stderr:\n%s",
					names, c.servers, stderr)
			}

			var wantServers any = map[string]any{}
			if res.Config.McpServers != nil {
				wantServers = viaJSON(t, res.Config.McpServers)
			}
			var wantSettings any = map[string]any{}
			if len(res.Config.Settings) > 0 {
				wantSettings = viaJSON(t, res.Config.Settings)
			}
			gotServers, gotSettings := runPiagentReader(t, c)

			if diff := cmp.Diff(wantServers, gotServers); diff != "" {
				t.Errorf("servers differ (-adapter +piagent):\n%s", diff)
			}
			if diff := cmp.Diff(wantSettings, gotSettings); diff != "" {
				t.Errorf("merged settings differ (-adapter +piagent):\n%s", diff)
			}
			if t.Failed() {
				t.Logf("root: %s\nadapter provenance: %s\nadapter stderr:\n%s", c.root, res.Provenance, stderr)
			}
		})
	}
}
