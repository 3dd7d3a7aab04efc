package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const allLayers = `
-- home/.config/mcp/mcp.json --
{"mcpServers": {"g": {"command": "g"}, "x": {"command": "shared-global", "args": ["a"]}}}
-- home/.agents/mcp.json --
{"mcpServers": {"a": {"command": "a"}, "x": {"command": "agents-global"}}}
-- home/.agents/mcp/mcp.json --
{"mcpServers": {"n": {"command": "n"}, "x": {"command": "agents-nested"}}}
-- home/.pi/agent/mcp.json --
{"mcpServers": {"pg": {"command": "pg"}, "x": {"command": "pi-global"}}}
-- home/proj/.mcp.json --
{"mcpServers": {"p": {"command": "p"}, "x": {"command": "project"}}}
-- home/proj/.pi/mcp.json --
{"mcpServers": {"pp": {"command": "pp"}, "x": {"command": "pi-project"}}}
`

func TestLayersAndPrecedence(t *testing.T) {
	t.Parallel()
	root := fixture(t, allLayers)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject}, layerIDs(v)); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "g", "n", "p", "pg", "pp", "x"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	type prov struct {
		Scope, Layer, File string
		Repo               bool
	}
	want := map[string]prov{
		"g":  {ScopeGlobal, LayerSharedGlobal, "home/.config/mcp/mcp.json", false},
		"a":  {ScopeGlobal, LayerAgentsGlobal, "home/.agents/mcp.json", false},
		"n":  {ScopeGlobal, LayerAgentsNested, "home/.agents/mcp/mcp.json", false},
		"pg": {ScopePiGlobal, LayerPiGlobal, "home/.pi/agent/mcp.json", false},
		"p":  {ScopeProject, LayerSharedProject, "home/proj/.mcp.json", true},
		"pp": {ScopePiProject, LayerPiProject, "home/proj/.pi/mcp.json", true},
		"x":  {ScopePiProject, LayerPiProject, "home/proj/.pi/mcp.json", true},
	}
	for name, w := range want {
		s := mustServer(t, v, name)
		got := prov{s.Scope, s.Layer, rel(root, s.Source.File), s.RepositoryControlled}
		if got != w {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
	x := mustServer(t, v, "x")
	if diff := cmp.Diff(Entry{"command": "pi-project", "args": []any{"a"}}, x.Entry); diff != "" {
		t.Errorf("x entry (-want +got):\n%s", diff)
	}
	wantContribs := []string{
		"shared-global::home/.config/mcp/mcp.json", "agents-global::home/.agents/mcp.json",
		"agents-nested-global::home/.agents/mcp/mcp.json", "pi-global::home/.pi/agent/mcp.json",
		"shared-project::home/proj/.mcp.json", "pi-project::home/proj/.pi/mcp.json",
	}
	if diff := cmp.Diff(wantContribs, contribSummary(root, x)); diff != "" {
		t.Errorf("x contributions (-want +got):\n%s", diff)
	}
	if r := x.RepositoryReason; r != "declared in the project's .pi/mcp.json" {
		t.Errorf("x reason = %q", r)
	}
	if r := mustServer(t, v, "p").RepositoryReason; r != "declared in the project's .mcp.json" {
		t.Errorf("p reason = %q", r)
	}
	for _, c := range x.Contributions {
		if want := c.Layer == LayerSharedProject || c.Layer == LayerPiProject; c.Repository != want {
			t.Errorf("contribution %s repository = %v", c.Layer, c.Repository)
		}
	}
}

func TestDuplicatePaths(t *testing.T) {
	t.Parallel()
	root := fixture(t, allLayers)
	home := filepath.Join(root, "home")
	tests := []struct {
		name       string
		getenv     func(string) string
		configPath string
		want       []string
	}{
		{"agent dir at ~/.config/mcp drops shared-global", env("PI_CODING_AGENT_DIR", "~/.config/mcp"), "",
			[]string{LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject}},
		{"agent dir at ~/.agents drops agents-global", env("PI_CODING_AGENT_DIR", home+"/.agents"), "",
			[]string{LayerSharedGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject}},
		{"--mcp-config at the project file drops shared-project", nil, ".mcp.json",
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerPiProject}},
		{"--mcp-config at .pi/mcp.json drops pi-project", nil, filepath.Join(root, "home/proj/.pi/mcp.json"),
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := Load(Options{Home: home, Cwd: filepath.Join(home, "proj"), Getenv: tt.getenv, ConfigPath: tt.configPath})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, layerIDs(v)); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExclusive(t *testing.T) {
	t.Parallel()
	root := fixture(t, allLayers)
	for _, mode := range []string{"exclusive", "  EXCLUSIVE\n", "Exclusive"} {
		v := loadAt(t, root, "home/proj", env("PI_MCP_CONFIG_MODE", mode))
		if !v.Exclusive {
			t.Errorf("%q: not exclusive", mode)
		}
		if diff := cmp.Diff([]string{LayerPiGlobal}, layerIDs(v)); diff != "" {
			t.Errorf("%q layers (-want +got):\n%s", mode, diff)
		}
		if diff := cmp.Diff([]string{"pg", "x"}, names(v)); diff != "" {
			t.Errorf("%q servers (-want +got):\n%s", mode, diff)
		}
	}
	v := loadAt(t, root, "home/proj", env("PI_MCP_CONFIG_MODE", "exclusive-ish"))
	if v.Exclusive || len(v.Layers) != 6 {
		t.Errorf("exclusive-ish: exclusive=%v layers=%v", v.Exclusive, layerIDs(v))
	}
}

func TestExclusiveWithConfigPath(t *testing.T) {
	t.Parallel()
	root := fixture(t, allLayers+`
-- approved.json --
{"mcpServers": {"ok": {"command": "ok"}}}
`)
	home := filepath.Join(root, "home")
	v, err := Load(Options{Home: home, Cwd: filepath.Join(home, "proj"), Getenv: env("PI_MCP_CONFIG_MODE", "exclusive"), ConfigPath: "../../approved.json"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if got := v.Layers[0].Path; got != filepath.Join(root, "approved.json") {
		t.Errorf("pi-global path = %s", got)
	}
}

func TestAncestorRoots(t *testing.T) {
	t.Parallel()
	const files = `
-- home/work/.mcp.json --
{"mcpServers": {"far": {"command": "far"}, "x": {"command": "work"}}}
-- home/work/.pi/mcp.json --
{"mcpServers": {"x": {"command": "work-pi"}}}
-- home/work/team/.git/HEAD --
ref: refs/heads/main
-- home/work/team/.mcp.json --
{"mcpServers": {"near": {"command": "near"}}}
-- home/work/team/proj/.mcp.json --
{"mcpServers": {"p": {"command": "p"}}}
-- outside/.mcp.json --
{"mcpServers": {"out": {"command": "out"}}}
`
	tests := []struct {
		name      string
		global    string // ~/.pi/agent/mcp.json
		project   string // project .pi/mcp.json
		wantLayer []string
		wantNames []string
	}{
		{"off by default", `{}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject},
			[]string{"p"}},
		{"honoured from a global layer", `{"settings": {"ancestorConfigRoots": ["~/work"]}}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerAncestor, LayerAncestor, LayerAncestor, LayerSharedProject, LayerPiProject},
			[]string{"far", "near", "p", "x"}},
		{"deepest root wins", `{"settings": {"ancestorConfigRoots": ["~/work", "$ROOT/home/work/team"]}}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerAncestor, LayerSharedProject, LayerPiProject},
			[]string{"near", "p"}},
		{"refused from the project", `{}`, `{"settings": {"ancestorConfigRoots": ["~/work"]}}`,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject},
			[]string{"p"}},
		{"root outside home refused", `{"settings": {"ancestorConfigRoots": ["$ROOT"]}}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject},
			[]string{"p"}},
		{"relative root refused", `{"settings": {"ancestorConfigRoots": ["work"]}}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject},
			[]string{"p"}},
		{"root not containing cwd refused", `{"settings": {"ancestorConfigRoots": ["~/other"]}}`, ``,
			[]string{LayerSharedGlobal, LayerAgentsGlobal, LayerAgentsNested, LayerPiGlobal, LayerSharedProject, LayerPiProject},
			[]string{"p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			archive := files + "-- home/.pi/agent/mcp.json --\n" + tt.global + "\n-- home/other.dir --\n"
			if tt.project != "" {
				archive += "-- home/work/team/proj/.pi/mcp.json --\n" + tt.project + "\n"
			}
			root := fixture(t, archive)
			v := loadAt(t, root, "home/work/team/proj", nil)
			if diff := cmp.Diff(tt.wantLayer, layerIDs(v)); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNames, names(v)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if !strings.Contains(tt.name, "honoured") {
				return
			}
			// Farthest first, .pi beats .mcp.json within one directory.
			var anc []string
			for _, l := range v.Layers {
				if l.ID == LayerAncestor {
					anc = append(anc, rel(root, l.Path)+map[bool]string{true: " repo", false: ""}[l.Repository])
				}
			}
			wantAnc := []string{"home/work/.mcp.json", "home/work/.pi/mcp.json", "home/work/team/.mcp.json repo"}
			if diff := cmp.Diff(wantAnc, anc); diff != "" {
				t.Errorf("ancestors (-want +got):\n%s", diff)
			}
			x := mustServer(t, v, "x")
			if x.Entry["command"] != "work-pi" || x.Scope != ScopeAncestor || x.RepositoryControlled {
				t.Errorf("x = %+v", x)
			}
			near := mustServer(t, v, "near")
			if !near.RepositoryControlled || !strings.HasPrefix(near.RepositoryReason, "ancestor layer inside the working tree") {
				t.Errorf("near: repo=%v reason=%q", near.RepositoryControlled, near.RepositoryReason)
			}
		})
	}
}

func TestAncestorAliasOfGlobalDropped(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"settings": {"ancestorConfigRoots": ["~/work"]}, "mcpServers": {"g": {"command": "g"}}}
-- home/work/.mcp.json@symlink --
$ROOT/home/.pi/agent/mcp.json
-- home/work/proj/.keep --
`)
	v := loadAt(t, root, "home/work/proj", nil)
	for _, l := range v.Layers {
		if l.ID == LayerAncestor {
			t.Errorf("alias of the pi-global file loaded as ancestor: %s", l.Path)
		}
	}
	if s := mustServer(t, v, "g"); s.Layer != LayerPiGlobal {
		t.Errorf("g layer = %s", s.Layer)
	}
}

func TestParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		want    []string
		present bool
		loaded  bool
	}{
		{"jsonc comments and trailing commas", "// c\n{\"mcpServers\": {/* x */ \"a\": {\"command\": \"a\",},},}", []string{"a"}, true, true},
		{"blank file is absent", "  \n\t", nil, false, false},
		{"comment-only file is absent", "// nothing\n/* here */", nil, false, false},
		{"BOM and JavaScript white space only is absent", "\ufeff\u00a0\n// x\r\n\u2028", nil, false, false},
		{"unterminated block comment is broken", "/* open", nil, true, false},
		{"BOM before JSON is broken", "\ufeff{}", nil, true, false},
		{"mcp-servers alias", `{"mcp-servers": {"a": {"command": "a"}}}`, []string{"a"}, true, true},
		{"mcpServers wins over the alias", `{"mcpServers": {"a": {}}, "mcp-servers": {"b": {}}}`, []string{"a"}, true, true},
		{"null mcpServers falls back to the alias", `{"mcpServers": null, "mcp-servers": {"b": {}}}`, []string{"b"}, true, true},
		{"non-object map is empty", `{"mcpServers": ["a"]}`, nil, true, true},
		{"non-object entries dropped", `{"mcpServers": {"a": "x", "b": [1], "c": null, "d": {"url": "https://d"}}}`, []string{"d"}, true, true},
		{"non-object top level is an empty config", `[1, 2]`, nil, true, true},
		{"__proto__ server is lost", `{"mcpServers": {"__proto__": {"command": "x"}, "ok": {}}}`, []string{"ok"}, true, true},
		{"settings not an object skips the file", `{"settings": [], "mcpServers": {"a": {}}}`, nil, true, false},
		{"null settings skips the file", `{"settings": null, "mcpServers": {"a": {}}}`, nil, true, false},
		{"bad jev skips the file", `{"settings": {"jev": {"model": "jev-latest"}}, "mcpServers": {"a": {}}}`, nil, true, false},
		{"unknown jev key skips the file", `{"settings": {"jev": {"nope": 1}}, "mcpServers": {"a": {}}}`, nil, true, false},
		{"jev false is fine", `{"settings": {"jev": false}, "mcpServers": {"a": {}}}`, []string{"a"}, true, true},
		{"valid jev is fine", `{"settings": {"jev": {"model": "jev-1.13.0", "maxRetries": 2, "semanticMinProbability": 0.5, "allowedServers": ["a"]}}, "mcpServers": {"a": {}}}`, []string{"a"}, true, true},
		{"imports not an array is ignored", `{"imports": "cursor", "mcpServers": {"a": {}}}`, []string{"a"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := fixture(t, "-- home/proj/.mcp.json --\n"+tt.file)
			v := loadAt(t, root, "home/proj", nil)
			if diff := cmp.Diff(tt.want, names(v)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			var lay Layer
			for _, l := range v.Layers {
				if l.ID == LayerSharedProject {
					lay = l
				}
			}
			if lay.Present != tt.present || lay.Loaded != tt.loaded {
				t.Errorf("present=%v loaded=%v, want %v %v", lay.Present, lay.Loaded, tt.present, tt.loaded)
			}
			if skipped := len(v.Skipped) > 0; skipped != (tt.present && !tt.loaded) {
				t.Errorf("skipped = %+v", v.Skipped)
			}
		})
	}
}

func TestBrokenFileReported(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.pi/agent/mcp.json --
{"mcpServers": {"g": {"command": "g"}}}
-- home/proj/.mcp.json --
{
  "mcpServers": {
    "a": {"command": "a"} "b": {}
  }
}
-- home/proj/.pi/mcp.json --
{"settings": 3, "mcpServers": {"pp": {"command": "pp"}}}
`)
	v := loadAt(t, root, "home/proj", nil)
	if diff := cmp.Diff([]string{"g"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if len(v.Skipped) != 2 {
		t.Fatalf("skipped = %+v", v.Skipped)
	}
	s := v.Skipped[0]
	if rel(root, s.Path) != "home/proj/.mcp.json" || s.Layer != LayerSharedProject || s.Line != 3 || s.Column != 27 {
		t.Errorf("skipped[0] = %+v", s)
	}
	if !strings.HasPrefix(s.Reason, "invalid JSONC") {
		t.Errorf("reason = %q", s.Reason)
	}
	s = v.Skipped[1]
	if rel(root, s.Path) != "home/proj/.pi/mcp.json" || s.Layer != LayerPiProject || s.Reason != "invalid mcp config: settings must be an object" {
		t.Errorf("skipped[1] = %+v", s)
	}
}

func TestUnreadableLayer(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/proj/.mcp.json/inner --
a directory where a file should be
`)
	v := loadAt(t, root, "home/proj", nil)
	if len(v.Skipped) != 1 || v.Skipped[0].Layer != LayerSharedProject || !strings.HasPrefix(v.Skipped[0].Reason, "cannot read") {
		t.Errorf("skipped = %+v", v.Skipped)
	}
}

func TestSettingsMerge(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/.config/mcp/mcp.json --
{"settings": {"toolPrefix": "short", "outputGuard": {"maxBytes": 1}, "idleTimeout": 5}}
-- home/.pi/agent/mcp.json --
{"settings": {"toolPrefix": "server", "outputGuard": {"maxLines": 2}}}
-- home/proj/.mcp.json --
{"settings": {"directTools": true}}
-- home/proj/.pi/mcp.json --
{"settings": {"toolPrefix": "none"}, "mcpServers": {}}
`)
	v := loadAt(t, root, "home/proj", nil)
	want := map[string]any{"toolPrefix": "none", "outputGuard": map[string]any{"maxLines": 2.0}, "idleTimeout": 5.0, "directTools": true}
	if diff := cmp.Diff(want, v.Settings); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	type o struct {
		File, Layer string
		Repo        bool
		Value       any
	}
	var got []o
	for _, s := range v.SettingOrigins["toolPrefix"] {
		got = append(got, o{rel(root, s.File), s.Layer, s.Repository, s.Value})
	}
	wantO := []o{
		{"home/.config/mcp/mcp.json", LayerSharedGlobal, false, "short"},
		{"home/.pi/agent/mcp.json", LayerPiGlobal, false, "server"},
		{"home/proj/.pi/mcp.json", LayerPiProject, true, "none"},
	}
	if diff := cmp.Diff(wantO, got); diff != "" {
		t.Errorf("toolPrefix origins (-want +got):\n%s", diff)
	}
	if n := len(v.SettingOrigins["directTools"]); n != 1 {
		t.Errorf("directTools origins = %d", n)
	}
}

func TestSymlinkedProjectFile(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- elsewhere/shared.json --
{"mcpServers": {"linked": {"command": "evil"}}}
-- home/proj/.mcp.json@symlink --
$ROOT/elsewhere/shared.json
`)
	v := loadAt(t, root, "home/proj", nil)
	s := mustServer(t, v, "linked")
	if s.Layer != LayerSharedProject || s.Scope != ScopeProject || !s.RepositoryControlled {
		t.Errorf("linked = %+v", s)
	}
	if !strings.Contains(s.RepositoryReason, "a symlink to "+filepath.Join(root, "elsewhere/shared.json")) {
		t.Errorf("reason = %q", s.RepositoryReason)
	}
	if rel(root, s.Source.File) != "home/proj/.mcp.json" {
		t.Errorf("source = %s", s.Source.File)
	}
	for _, p := range []string{"home/proj/.mcp.json", "elsewhere/shared.json"} {
		if !slices.Contains(v.Consulted, filepath.Join(root, p)) {
			t.Errorf("consulted lacks %s", p)
		}
	}
}

func TestConsultedIncludesMissing(t *testing.T) {
	t.Parallel()
	root := fixture(t, "-- home/proj/.mcp.json --\n{}\n")
	v := loadAt(t, root, "home/proj", nil)
	for _, p := range []string{
		"home/.config/mcp/mcp.json", "home/.agents/mcp.json", "home/.agents/mcp/mcp.json", "home/.pi/agent/mcp.json",
		"home/proj/.mcp.json", "home/proj/.pi/mcp.json", "home/proj/.pi/settings.json", "home/.pi/agent/settings.json",
	} {
		if !slices.Contains(v.Consulted, filepath.Join(root, p)) {
			t.Errorf("consulted lacks %s", p)
		}
	}
	if !slices.IsSorted(v.Consulted) || len(slices.Compact(slices.Clone(v.Consulted))) != len(v.Consulted) {
		t.Errorf("consulted not sorted and unique: %v", v.Consulted)
	}
	for _, p := range v.Consulted {
		if !filepath.IsAbs(p) {
			t.Errorf("relative consulted path %s", p)
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{Home: "", Cwd: "/"}, {Home: "rel", Cwd: "/"}, {Home: "/", Cwd: "x"}} {
		if _, err := Load(o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
}

func TestRebrandedConfigDir(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- brand/package.json --
{"piConfig": {"name": "tau", "configDir": ".tau"}}
-- home/.tau/agent/mcp.json --
{"mcpServers": {"g": {"command": "g"}}}
-- home/proj/.tau/mcp.json --
{"mcpServers": {"pp": {"command": "pp"}}}
-- custom/mcp.json --
{"mcpServers": {"c": {"command": "c"}}}
`)
	v := loadAt(t, root, "home/proj", env("PI_PACKAGE_DIR", filepath.Join(root, "brand")))
	if diff := cmp.Diff([]string{"g", "pp"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if v.ConfigDir != ".tau" {
		t.Errorf("config dir = %s", v.ConfigDir)
	}
	v = loadAt(t, root, "home/proj", env("PI_PACKAGE_DIR", filepath.Join(root, "brand"), "TAU_CODING_AGENT_DIR", filepath.Join(root, "custom")))
	if diff := cmp.Diff([]string{"c", "pp"}, names(v)); diff != "" {
		t.Errorf("servers with TAU_CODING_AGENT_DIR (-want +got):\n%s", diff)
	}
	if !slices.Contains(v.Consulted, filepath.Join(root, "brand/package.json")) {
		t.Error("consulted lacks the brand manifest")
	}
}

func TestProjectIsCwdNotGitRoot(t *testing.T) {
	t.Parallel()
	root := fixture(t, `
-- home/repo/.git/HEAD --
x
-- home/repo/.mcp.json --
{"mcpServers": {"top": {"command": "top"}}}
-- home/repo/sub/.mcp.json --
{"mcpServers": {"sub": {"command": "sub"}}}
`)
	v := loadAt(t, root, "home/repo/sub", nil)
	if diff := cmp.Diff([]string{"sub"}, names(v)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestDirExists(t *testing.T) {
	// Guard against fixture helper regressions.
	t.Parallel()
	root := fixture(t, "-- a/b.dir --\n")
	if fi, err := os.Stat(filepath.Join(root, "a/b")); err != nil || !fi.IsDir() {
		t.Fatal("fixture .dir entries must create directories")
	}
}
