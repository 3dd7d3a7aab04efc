package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// world lays out files under a fresh home and project. Keys start with
// "home/" or "proj/"; $HOME and $PROJ in contents are replaced.
func world(t *testing.T, files map[string]string) (home, proj string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content = strings.NewReplacer("$HOME", home, "$PROJ", proj).Replace(content)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj
}

func load(t *testing.T, home, proj string) *gate.Gate {
	t.Helper()
	g, err := gate.Load(gate.Options{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == "PATH" {
			return "/usr/bin:/bin"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// decide records a decision for each named server's current definition.
func decide(t *testing.T, home string, g *gate.Gate, decision string, names ...string) {
	t.Helper()
	err := approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
		for _, n := range names {
			s, ok := g.Server(n)
			if !ok {
				t.Fatalf("no server %s", n)
			}
			files := map[string]string{}
			for _, p := range s.Pinned {
				files[p.Path] = p.Digest
			}
			d.Set(g.Project, n, approval.Decision{Decision: decision, Digest: s.Digest, DecidedAt: "2026-01-01T00:00:00Z", Files: files})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// switchOff records the person's switch for names, keeping each decision.
func switchOff(t *testing.T, home string, g *gate.Gate, names ...string) {
	t.Helper()
	err := approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
		for _, n := range names {
			dec, _ := d.Get(g.Project, n)
			dec.Off = true
			d.Set(g.Project, n, dec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// asJSON round-trips v, with the world's paths replaced by $HOME and $PROJ.
func asJSON(t *testing.T, v any, home, proj string) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(home, "$HOME", proj, "$PROJ").Replace(string(data))
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func parse(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad want JSON %s: %v", s, err)
	}
	return v
}

const (
	piGlobal     = "home/.pi/agent/mcp.json"
	sharedGlobal = "home/.config/mcp/mcp.json"
	repoMCP      = "proj/.mcp.json"
	repoPi       = "proj/.pi/mcp.json"
	cursorFile   = "home/.cursor/mcp.json"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		files    map[string]string
		approve  []string // approved before the edit
		reject   []string
		off      []string          // switched off by the person (piagent-mcp disable)
		edit     map[string]string // files rewritten after the decisions
		want     string            // the configuration, as JSON
		wantHeld []string          // "name state"
	}{
		{
			name:  "user server kept whole",
			files: map[string]string{piGlobal: `{"mcpServers": {"mine": {"command": "node", "args": ["a.js"], "env": {"K": "${K}"}}}}`},
			want:  `{"mcpServers": {"mine": {"command": "node", "args": ["a.js"], "env": {"K": "${K}"}}}}`,
		},
		{
			name:     "unapproved repository server held back",
			files:    map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node", "args": ["evil.js"]}}}`},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"repo-tools pending-approval"},
		},
		{
			name:    "approved repository server written as its merged definition",
			files:   map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node", "args": ["ok.js"], "lifecycle": "eager"}}}`},
			approve: []string{"repo-tools"},
			want:    `{"mcpServers": {"repo-tools": {"command": "node", "args": ["ok.js"], "lifecycle": "eager"}}}`,
		},
		{
			name: "repository override of a user server: merged, once approved",
			files: map[string]string{
				sharedGlobal: `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"T": "${GH}"}}}}`,
				repoPi:       `{"mcpServers": {"gh": {"args": ["--repo", "x"]}}}`,
			},
			approve: []string{"gh"},
			want:    `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"T": "${GH}"}, "args": ["--repo", "x"]}}}`,
		},
		{
			name:     "edited after approval: held back",
			files:    map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node", "args": ["ok.js"]}}}`},
			approve:  []string{"repo-tools"},
			edit:     map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node", "args": ["ok.js", "--evil"]}}}`},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"repo-tools approval-changed"},
		},
		{
			// the person's own switch, outside the repository (issue 38)
			name:    "approved, then switched off: left out",
			files:   map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node", "args": ["ok.js"]}}}`},
			approve: []string{"repo-tools"},
			off:     []string{"repo-tools"},
			want:    `{"mcpServers": {}}`,
		},
		{
			name:     "rejected: held back",
			files:    map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node"}}}`},
			reject:   []string{"repo-tools"},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"repo-tools rejected"},
		},
		{
			name:  "disabled: the user's kept, the repository's dropped",
			files: map[string]string{piGlobal: `{"mcpServers": {"mine": {"command": "node", "disabled": true}}}`, repoMCP: `{"mcpServers": {"theirs": {"command": "node", "disabled": true}}}`},
			want:  `{"mcpServers": {"mine": {"command": "node", "disabled": true}}}`,
		},
		{
			name: "user import of a home kind kept by reference, not copied",
			files: map[string]string{
				piGlobal:   `{"imports": ["cursor"], "mcpServers": {}}`,
				cursorFile: `{"mcpServers": {"cur": {"command": "cursor-mcp", "env": {"TOKEN": "literal-value"}}}}`,
			},
			want: `{"imports": ["cursor"], "mcpServers": {}}`,
		},
		{
			name: "user override of an imported server: only the override is written",
			files: map[string]string{
				sharedGlobal: `{"imports": ["cursor"]}`,
				piGlobal:     `{"mcpServers": {"cur": {"args": ["--fast"]}}}`,
				cursorFile:   `{"mcpServers": {"cur": {"command": "cursor-mcp", "env": {"TOKEN": "literal-value"}}}}`,
			},
			want: `{"imports": ["cursor"], "mcpServers": {"cur": {"args": ["--fast"]}}}`,
		},
		{
			name: "an override that does not merge back the same drops the import",
			files: map[string]string{
				sharedGlobal:            `{"imports": ["cursor"]}`,
				"home/.agents/mcp.json": `{"mcpServers": {"cur": {"url": "https://u.example/mcp"}}}`,
				piGlobal:                `{"mcpServers": {"cur": {"command": "other"}}}`,
				cursorFile:              `{"mcpServers": {"cur": {"command": "cursor-mcp", "args": ["a"]}, "plain": {"command": "p"}}}`,
			},
			want: `{"mcpServers": {"cur": {"command": "other"}, "plain": {"command": "p"}}}`,
		},
		{
			name: "a held repository override of an imported server is stubbed out",
			files: map[string]string{
				piGlobal:   `{"imports": ["cursor"]}`,
				repoMCP:    `{"mcpServers": {"cur": {"args": ["--evil"]}}}`,
				cursorFile: `{"mcpServers": {"cur": {"command": "cursor-mcp"}}}`,
			},
			want:     `{"imports": ["cursor"], "mcpServers": {"cur": {"disabled": true}}}`,
			wantHeld: []string{"cur pending-approval"},
		},
		{
			name: "repository-relative import kinds are never kept",
			files: map[string]string{
				piGlobal:                `{"imports": ["vscode", "opencode"]}`,
				"proj/.vscode/mcp.json": `{"mcpServers": {"vs": {"command": "vs-mcp"}}}`,
				"proj/opencode.json":    `{"mcp": {"oc": {"type": "local", "command": ["oc-mcp"]}}}`,
			},
			approve:  []string{"vs"},
			want:     `{"mcpServers": {"vs": {"command": "vs-mcp"}}}`,
			wantHeld: []string{"oc pending-approval"},
		},
		{
			name: "a repository layer's import is not kept; its servers need approval",
			files: map[string]string{
				repoMCP:    `{"imports": ["cursor"]}`,
				cursorFile: `{"mcpServers": {"cur": {"command": "cursor-mcp"}}}`,
			},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"cur pending-approval"},
		},
		{
			name: "host discovery switched on by the repository: off, and its servers held",
			files: map[string]string{
				repoMCP:                 `{"settings": {"hostConfigDiscovery": "on"}}`,
				"proj/.vscode/mcp.json": `{"mcpServers": {"vs": {"command": "vs-mcp"}}}`,
			},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"vs pending-approval"},
		},
		{
			name: "host discovery switched on by the user: servers written explicitly",
			files: map[string]string{
				piGlobal:   `{"settings": {"hostConfigDiscovery": "on", "ancestorConfigRoots": ["~"]}}`,
				cursorFile: `{"mcpServers": {"cur": {"command": "cursor-mcp"}}}`,
			},
			want: `{"mcpServers": {"cur": {"command": "cursor-mcp"}}}`,
		},
		{
			name: "settings: widening repository values dropped, the user's beneath kept",
			files: map[string]string{
				piGlobal: `{"settings": {"approveTools": true, "toolPrefix": "server", "idleTimeout": 5}}`,
				repoMCP: `{"settings": {"approveTools": false, "outputGuard": false, "samplingAutoApprove": true, "autoAuth": true,
					"trace": {"file": "t.log"}, "oauthDir": "x", "agentPluginPaths": ["./p"], "toolPrefix": "short", "directTools": false}}`,
			},
			want: `{"mcpServers": {}, "settings": {"approveTools": true, "toolPrefix": "short", "idleTimeout": 5, "directTools": false}}`,
		},
		{
			name: "settings: narrowing repository values kept",
			files: map[string]string{
				repoMCP: `{"settings": {"approveTools": ["*"], "outputGuard": true, "autoAuth": false}}`,
			},
			want: `{"mcpServers": {}, "settings": {"approveTools": ["*"], "outputGuard": true, "autoAuth": false}}`,
		},
		{
			name: "a project Pi package's server is held; the user's package is written under the adapter's name",
			files: map[string]string{
				"proj/.pi/settings.json":       `{"packages": ["../evilpkg"]}`,
				"proj/evilpkg/package.json":    `{"name": "evilpkg", "pi": {"mcp": "mcp.json"}}`,
				"proj/evilpkg/mcp.json":        `{"mcpServers": {"srv": {"command": "evil"}}}`,
				"home/.pi/agent/settings.json": `{"packages": ["$HOME/goodpkg"]}`,
				"home/goodpkg/package.json":    `{"name": "goodpkg", "pi": {"mcp": "mcp.json"}}`,
				"home/goodpkg/mcp.json":        `{"mcpServers": {"srv": {"command": "good"}}}`,
			},
			want:     `{"mcpServers": {"goodpkg__srv": {"command": "good"}}}`,
			wantHeld: []string{"evilpkg__srv pending-approval"},
		},
		{
			name: "claudePlugins chosen by the repository: dropped, servers held",
			files: map[string]string{
				piGlobal:                    `{"claudePlugins": [{"path": "$HOME/cp", "mcp": true}]}`,
				"home/cp/.mcp.json":         `{"mcpServers": {"homecp": {"command": "h"}}}`,
				repoMCP:                     `{"claudePlugins": [{"path": "./plugins/cp", "mcp": true}]}`,
				"proj/plugins/cp/.mcp.json": `{"mcpServers": {"cpsrv": {"command": "${CLAUDE_PLUGIN_ROOT}/run"}}}`,
			},
			want:     `{"mcpServers": {}}`,
			wantHeld: []string{"cpsrv pending-approval"},
		},
		{
			name: "user claudePlugins outside the project kept by reference",
			files: map[string]string{
				piGlobal:            `{"claudePlugins": [{"path": "~/cp", "mcp": true, "skills": true}, {"path": "./inrepo", "mcp": true}]}`,
				"home/cp/.mcp.json": `{"mcpServers": {"homecp": {"command": "h"}}}`,
			},
			want: `{"claudePlugins": [{"path": "~/cp", "mcp": true, "skills": true}], "mcpServers": {}}`,
		},
		{
			name: "user claudePlugins with a plugin inside the project: skills kept, servers explicit",
			files: map[string]string{
				piGlobal:                    `{"claudePlugins": [{"path": "~/cp", "mcp": true, "skills": true}, {"path": "$PROJ/plugins/cp", "mcp": true}]}`,
				"home/cp/.mcp.json":         `{"mcpServers": {"homecp": {"command": "h"}}}`,
				"proj/plugins/cp/.mcp.json": `{"mcpServers": {"cpsrv": {"command": "c"}}}`,
			},
			want:     `{"claudePlugins": [{"path": "~/cp", "mcp": false, "skills": true}], "mcpServers": {"homecp": {"command": "h", "env": {"CLAUDE_PLUGIN_ROOT": "$HOME/cp"}}}}`,
			wantHeld: []string{"cpsrv pending-approval"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, proj := world(t, tc.files)
			if len(tc.approve) > 0 {
				decide(t, home, load(t, home, proj), "approved", tc.approve...)
			}
			if len(tc.reject) > 0 {
				decide(t, home, load(t, home, proj), "rejected", tc.reject...)
			}
			if len(tc.off) > 0 {
				switchOff(t, home, load(t, home, proj), tc.off...)
			}
			if len(tc.edit) > 0 {
				root := filepath.Dir(home)
				for name, content := range tc.edit {
					if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			g := load(t, home, proj)
			cfg, held := Config(g)
			if diff := cmp.Diff(parse(t, tc.want), asJSON(t, cfg, home, proj)); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			var gotHeld []string
			for _, h := range held {
				gotHeld = append(gotHeld, h.Server+" "+h.State)
				if h.Approve != "piagent-mcp approve "+h.Server {
					t.Errorf("held %s: approve command %q", h.Server, h.Approve)
				}
			}
			if diff := cmp.Diff(tc.wantHeld, gotHeld); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}

// The generated file must load, in exclusive mode, to exactly the servers
// the gate lets run, with the same merged definitions.
func TestConfigRoundTrip(t *testing.T) {
	t.Parallel()
	home, proj := world(t, map[string]string{
		sharedGlobal: `{"imports": ["cursor"], "mcpServers": {"g": {"url": "https://g.example/mcp"}}}`,
		piGlobal:     `{"mcpServers": {"cur": {"args": ["--fast"]}}}`,
		cursorFile:   `{"mcpServers": {"cur": {"command": "cursor-mcp", "env": {"T": "v"}}, "other": {"command": "o"}}}`,
		repoMCP:      `{"mcpServers": {"ok": {"command": "node", "args": ["ok.js"]}, "held": {"command": "evil"}}}`,
	})
	decide(t, home, load(t, home, proj), "approved", "ok")
	g := load(t, home, proj)
	cfg, _ := Config(g)
	path, err := Write(home, g.Project, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := gate.Load(gate.Options{Home: home, Cwd: proj, ConfigPath: path, Getenv: func(k string) string {
		if k == EnvMode {
			return "exclusive"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	for _, s := range g.Servers {
		if s.Config.AdapterLoads && (!s.Repository || !gate.Blocks(s.State)) {
			want[s.Name] = s.Config.Entry
		}
	}
	got := map[string]any{}
	for _, s := range ex.View.Servers {
		got[s.Name] = s.Entry
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exclusive view of the generated file (-want +got):\n%s", diff)
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := "/work/some proj"
	p, err := Write(home, project, map[string]any{"mcpServers": map[string]any{"a": map[string]any{"url": "https://x/<y>"}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := Path(home, project); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	if !strings.HasPrefix(filepath.Base(p), "some proj-") || len(filepath.Base(p)) != len("some proj-")+12+len(".json") {
		t.Errorf("file name %s: want <basename>-<12 hex>.json", filepath.Base(p))
	}
	if Path(home, "/other/some proj") == p {
		t.Error("two projects with one basename share a file")
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, d := range []string{filepath.Dir(p), filepath.Dir(filepath.Dir(p))} {
		di, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, di.Mode().Perm())
		}
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "https://x/<y>") {
		t.Errorf("HTML escaping in %s", data)
	}
	// Rewritten in place; no temporary files left behind.
	if _, err := Write(home, project, map[string]any{"mcpServers": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("launch folder holds %d entries, want 1", len(entries))
	}
	data, _ = os.ReadFile(p)
	if strings.Contains(string(data), "https://x") {
		t.Errorf("not rewritten: %s", data)
	}
	if _, err := Write("", project, nil); err != paths.ErrNoHome {
		t.Errorf("no home: err %v", err)
	}
}

func TestHideMode(t *testing.T) {
	t.Parallel()
	vars := map[string]string{EnvMode: "exclusive", "OTHER": "x"}
	g := gate.HideMode(func(k string) string { return vars[k] })
	if g(EnvMode) != "" || g("OTHER") != "x" {
		t.Errorf("hideMode: mode %q, other %q", g(EnvMode), g("OTHER"))
	}
	if gate.HideMode(nil)("OTHER") != "" {
		t.Error("nil getenv")
	}
}

// Refresh does nothing outside a launched session, and inside one rewrites
// the session project's file from the real configuration, even though the
// environment says exclusive.
func TestRefresh(t *testing.T) {
	t.Parallel()
	home, proj := world(t, map[string]string{repoMCP: `{"mcpServers": {"repo-tools": {"command": "node"}}}`})
	key, err := approval.ProjectKey(proj)
	if err != nil {
		t.Fatal(err)
	}
	if err := Refresh(home, proj, func(string) string { return "" }, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(Path(home, key)); !os.IsNotExist(err) {
		t.Fatalf("written outside a launched session: %v", err)
	}
	decide(t, home, load(t, home, proj), "approved", "repo-tools")
	vars := map[string]string{EnvConfig: Path(home, key), EnvLauncher: "1", EnvMode: "exclusive", EnvProject: key}
	if err := Refresh(home, "/elsewhere", func(k string) string { return vars[k] }, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(Path(home, key))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"repo-tools"`) {
		t.Errorf("refreshed file lacks the approved server:\n%s", data)
	}
}

// TestContainerRuntimeOnlyInstalled (issue 37): the container exception is
// for an installed runtime alone; a repository's own script named docker,
// or a link to one, runs confined.
func TestContainerRuntimeOnlyInstalled(t *testing.T) {
	proj := t.TempDir()
	tools := filepath.Join(proj, "tools")
	if err := os.MkdirAll(filepath.Join(proj, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(tools, "docker"), filepath.Join(proj, "node_modules", ".bin", "podman")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\nid\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	if err := os.Symlink(filepath.Join(tools, "docker"), filepath.Join(bin, "docker")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, cmd := range []string{"./tools/docker", filepath.Join(tools, "docker"), "tools/docker", filepath.Join(proj, "node_modules", ".bin", "podman"), "docker"} {
		if ContainerRuntime(cmd, proj) {
			t.Errorf("%s is taken for a container runtime", cmd)
		}
	}
	// An installed one (root's or this user's, in a folder no one else
	// writes) is.
	inst := filepath.Join(t.TempDir(), "sbin")
	if err := os.Mkdir(inst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inst, "docker"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !ContainerRuntime(filepath.Join(inst, "docker"), proj) {
		t.Error("an installed docker is not taken for a container runtime")
	}
	if err := os.Chmod(inst, 0o777); err != nil {
		t.Fatal(err)
	}
	if ContainerRuntime(filepath.Join(inst, "docker"), proj) {
		t.Error("a docker in a world-writable folder is taken for a container runtime")
	}
	// An installed runtime runs under --env-only: unconfined, with the
	// server's environment allow-list.
	if err := os.Chmod(inst, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgInst := map[string]any{"mcpServers": map[string]any{"d": map[string]any{"command": filepath.Join(inst, "docker"), "args": []any{"run"}}}}
	(&Confine{Bin: "/usr/bin/piagent"}).Wrap(cfgInst, proj)
	d := cfgInst["mcpServers"].(map[string]any)["d"].(map[string]any)
	if d["command"] != "/usr/bin/piagent" || !slices.Contains(d["args"].([]any), any("--env-only")) {
		t.Errorf("an installed docker is not run with the environment allow-list: %v %v", d["command"], d["args"])
	}
	// What the launcher makes of it: the repository's docker is wrapped.
	cfg := map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "./tools/docker", "args": []any{"run"}}}}
	(&Confine{Bin: "/usr/bin/piagent"}).Wrap(cfg, proj)
	if got := cfg["mcpServers"].(map[string]any)["s"].(map[string]any)["command"]; got != "/usr/bin/piagent" {
		t.Errorf("the repository's docker runs unconfined: command %v", got)
	}
}

// With piagent-sandbox installed beside piagent, a server runs under
// `piagent-sandbox exec --profile server …`, the same confinement in the
// smaller binary; without it, under `piagent sandbox exec`.
func TestConfineLean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    Confine
		want []any
	}{
		{Confine{Bin: "/usr/bin/piagent"}, []any{"sandbox", "exec", "--profile", "server", "--server", "s", "--project", "/p", "--", "node", "x.js"}},
		{Confine{Bin: "/usr/bin/piagent", Lean: "/usr/bin/piagent-sandbox"}, []any{"exec", "--profile", "server", "--server", "s", "--project", "/p", "--", "node", "x.js"}},
	} {
		cfg := map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "node", "args": []any{"x.js"}}}}
		tc.c.Wrap(cfg, "/p")
		s := cfg["mcpServers"].(map[string]any)["s"].(map[string]any)
		wantCmd := tc.c.Bin
		if tc.c.Lean != "" {
			wantCmd = tc.c.Lean
		}
		if s["command"] != wantCmd || !reflect.DeepEqual(s["args"], tc.want) {
			t.Errorf("%+v: command %v args %v", tc.c, s["command"], s["args"])
		}
	}
}
