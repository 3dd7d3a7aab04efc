package policy

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/piagent/piagent/internal/registry"
)

const projFile = "/home/u/proj/.pi/piagent-policy.json"

func TestProjectCannotLoosen(t *testing.T) {
	t.Parallel()
	userEnforce := `{"version": 1, "registryMode": "enforce"}`
	tests := []struct {
		name, user, project string
		want                []Violation
		check               func(t *testing.T, p *Policy)
	}{
		{
			name:    "remove a protected path",
			project: `{"version": 1, "remove": {"protectedPaths": [".env*"], "shellProtectedPaths": ["~/.kube/config"], "execRules": ["x"]}}`,
			want: []Violation{
				{projFile, "remove.protectedPaths", `".env*": a repository cannot remove a protected path`},
				{projFile, "remove.shellProtectedPaths", `"~/.kube/config": a repository cannot remove a protected path`},
				{projFile, "remove.execRules", `"x": a repository cannot remove a rule`},
			},
			check: func(t *testing.T, p *Policy) {
				if d := p.Decide(call("read", "path", ".env"), testFacts()); d.Action != ActionBlock {
					t.Errorf(".env readable after a project removal: %+v", d)
				}
			},
		},
		{
			name:    "allow read path",
			project: `{"version": 1, "allowReadPaths": [".env"]}`,
			want:    []Violation{{projFile, "allowReadPaths", `".env": a repository cannot make a path readable`}},
			check: func(t *testing.T, p *Policy) {
				if d := p.Decide(call("read", "path", ".env"), testFacts()); d.Action != ActionBlock {
					t.Errorf(".env readable: %+v", d)
				}
			},
		},
		{
			name:    "trusted-full-access",
			project: `{"version": 1, "permissionProfile": "trusted-full-access"}`,
			want:    []Violation{{projFile, "permissionProfile", "trusted-full-access can only be chosen in the user's own policy file"}},
			check: func(t *testing.T, p *Policy) {
				if p.PermissionProfile() != ProfileStandard {
					t.Errorf("profile %s", p.PermissionProfile())
				}
			},
		},
		{
			name:    "registry advisory under the user's enforce",
			user:    userEnforce,
			project: `{"version": 1, "registryMode": "advisory"}`,
			want:    []Violation{{projFile, "registryMode", "registryMode advisory would lower enforce; a repository may only raise the registry to enforce"}},
			check: func(t *testing.T, p *Policy) {
				if p.RegistryMode() != RegistryEnforce {
					t.Errorf("registry %s", p.RegistryMode())
				}
			},
		},
		{
			name:    "advisory when already advisory is no violation",
			project: `{"version": 1, "registryMode": "advisory"}`,
		},
		{
			name:    "more permissive mode",
			project: `{"version": 1, "mode": "ship"}`,
			want:    []Violation{{projFile, "mode", `mode "ship" is more permissive than "sourceWrite"; a repository may only choose a stricter mode`}},
			check: func(t *testing.T, p *Policy) {
				if p.ProjectMode() != "" {
					t.Errorf("project mode %q honoured", p.ProjectMode())
				}
			},
		},
		{
			name:    "register tools",
			project: `{"version": 1, "alwaysAllowedTools": ["evil"], "toolCapabilities": {"evil2": ["shell"]}}`,
			want: []Violation{
				{projFile, "alwaysAllowedTools", `"evil": a repository cannot register tools`},
				{projFile, "toolCapabilities", `"evil2": a repository cannot register tools`},
			},
		},
		{
			name:    "allow a shell rule",
			project: `{"version": 1, "execRuleActions": {"git-push": "allow"}}`,
			want:    []Violation{{projFile, "execRuleActions", `"git-push": a repository cannot allow what a rule blocks or asks about`}},
		},
		{
			name:    "weaken a user's rule action",
			user:    `{"version": 1, "execRuleActions": {"git-push": "block"}}`,
			project: `{"version": 1, "execRuleActions": {"git-push": "confirm"}}`,
			want:    []Violation{{projFile, "execRuleActions", `"git-push": confirm would weaken block`}},
		},
		{
			name:    "weaken a user's exec rule",
			user:    `{"version": 1, "execRules": [{"id": "no-docker", "command": "docker", "action": "block"}]}`,
			project: `{"version": 1, "execRules": [{"id": "no-docker", "command": "docker", "action": "confirm"}]}`,
			want:    []Violation{{projFile, "execRules", `"no-docker": a repository cannot weaken an existing rule`}},
		},
		{
			name:    "tightening is honoured",
			project: `{"version": 1, "protectedPaths": ["secrets/**"], "mode": "readOnly", "registryMode": "enforce", "execRules": [{"id": "no-docker", "command": "docker", "action": "block"}], "execRuleActions": {"git-push": "block"}}`,
			check: func(t *testing.T, p *Policy) {
				if d := p.Decide(call("read", "path", "secrets/db.txt"), testFacts()); d.Code != CodeProtectedPath {
					t.Errorf("secrets/db.txt: %+v", d)
				}
				if p.ProjectMode() != ModeReadOnly || p.RegistryMode() != RegistryEnforce {
					t.Errorf("mode %q registry %q", p.ProjectMode(), p.RegistryMode())
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := mustMerge(t, tc.user, tc.project)
			if diff := cmp.Diff(tc.want, p.Violations()); diff != "" {
				t.Errorf("Violations (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestUserMayLoosen(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, `{"version": 1, "remove": {"protectedPaths": ["*.key"]}, "allowReadPaths": ["config/.env.test"], "mode": "ship", "permissionProfile": "trusted-full-access"}`, "")
	if len(p.Violations()) != 0 {
		t.Errorf("violations: %v", p.Violations())
	}
	f := testFacts()
	for _, c := range []Call{call("read", "path", "tls.key"), call("read", "path", "config/.env.test")} {
		if d := p.Decide(c, f); d.Action != ActionAllow {
			t.Errorf("%v: %+v", c, d)
		}
	}
	if d := p.Decide(call("write", "path", "config/.env.test", "content", "x"), f); d.Code != CodeProtectedPath {
		t.Errorf("allowReadPaths made a path writable: %+v", d)
	}
	var found bool
	for _, s := range p.Sources() {
		if s.Field == "remove.protectedPaths" && s.Value == "*.key" && s.Layer == LayerUser {
			found = true
		}
	}
	if !found {
		t.Errorf("Sources lacks the user's removal: %v", p.Sources())
	}
}

func TestSources(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, `{"version": 1, "mode": "docsWrite"}`, `{"version": 1, "protectedPaths": ["secrets/**"]}`)
	want := map[string]Source{
		"mode":                    {Field: "mode", Value: "docsWrite", Layer: LayerUser, File: "/home/u/.pi/piagent-policy.json"},
		"secrets/**":              {Field: "protectedPaths", Value: "secrets/**", Layer: LayerProject, File: projFile},
		".env*":                   {Field: "protectedPaths", Value: ".env*", Layer: LayerBase},
		"registryMode":            {Field: "registryMode", Value: "advisory", Layer: LayerBase},
		"alwaysAllowedTools:read": {Field: "alwaysAllowedTools", Value: "read", Layer: LayerBase},
	}
	got := map[string]Source{}
	for _, s := range p.Sources() {
		switch {
		case s.Field == "protectedPaths":
			got[s.Value] = s
		case s.Field == "alwaysAllowedTools" && s.Value == "read":
			got["alwaysAllowedTools:read"] = s
		case s.Field == "mode" && s.Layer == LayerUser, s.Field == "registryMode":
			got[s.Field] = s
		}
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("source of %s (-want +got):\n%s", k, diff)
		}
	}
}

func TestParseFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		data      string
		line, col int
		msgHas    string
	}{
		{"empty", "", 0, 0, "empty"},
		{"truncated", "{\n  \"version\": 1,\n  \"protectedPaths\": [\".env\"", 3, 0, ""},
		{"not an object", "[1]", 1, 1, "JSON object"},
		{"version missing", `{"mode": "readOnly"}`, 1, 1, `"version" is required`},
		{"version unknown", "{\n\"version\": 2}", 2, 1, "version 2 is not supported"},
		{"unknown key", "{\"version\": 1,\n  \"protectedpaths\": []}", 2, 3, `did you mean "protectedPaths"`},
		{"case-sensitive key", "{\"Version\": 1}", 1, 2, `did you mean "version"`},
		{"unknown nested key", "{\"version\": 1, \"remove\": {\"paths\": []}}", 1, 27, `unknown key "paths" in remove`},
		{"duplicate key", "{\"version\": 1, \"mode\": \"ship\", \"mode\": \"readOnly\"}", 1, 32, "duplicate key"},
		{"wrong type", "{\"version\": 1,\n \"protectedPaths\": \".env\"}", 2, 0, "expected"},
		{"bad mode", "{\"version\": 1,\n \"mode\": \"yolo\"}", 2, 2, `mode "yolo"`},
		{"bad glob", "{\"version\": 1,\n \"protectedPaths\": [\"a[\"]}", 2, 21, "unclosed character class"},
		{"bad exec action", `{"version": 1, "execRules": [{"id": "r", "command": "x", "action": "allow"}]}`, 1, 0, `action "allow"`},
		{"trailing data", `{"version": 1} {}`, 1, 0, "after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseFile("p.json", []byte(tc.data))
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid")
			}
			if fe.File != "p.json" || fe.Line != tc.line || (tc.col != 0 && fe.Column != tc.col) {
				t.Errorf("position %s:%d:%d, want p.json:%d:%d (%v)", fe.File, fe.Line, fe.Column, tc.line, tc.col, err)
			}
			if !strings.Contains(fe.Msg, tc.msgHas) {
				t.Errorf("message %q does not contain %q", fe.Msg, tc.msgHas)
			}
		})
	}
}

func TestParseFileComments(t *testing.T) {
	t.Parallel()
	f, err := ParseFile("p.json", []byte("// mine\n{\n  \"version\": 1, /* a */\n  \"protectedPaths\": [\"x/**\",],\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x/**"}, f.ProtectedPaths); diff != "" {
		t.Error(diff)
	}
}

func TestCorruptFileBlocksEverything(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".pi"), 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(proj, ".pi", "piagent-policy.json")
	if err := os.WriteFile(name, []byte("{\n  \"version\": 1,\n  \"protectedPaths\": [\"a\",\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(home, proj)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != name || fe.Line == 0 {
		t.Fatalf("Load error = %v, want a FileError naming %s with a position", err, name)
	}
	if p == nil {
		t.Fatal("Load returned a nil policy")
	}
	for _, c := range []Call{call("read", "path", "README.md"), call("ls"), call("bash", "command", "echo hi")} {
		d := p.Decide(c, Facts{Home: home, Cwd: proj, ProjectRoot: proj})
		if d.Action != ActionBlock || d.Code != CodePolicyInvalid {
			t.Errorf("%s: %+v, want policy-invalid block", c.ToolName, d)
		}
		if !strings.Contains(d.Reason, name+":") {
			t.Errorf("reason %q does not name %s with a position", d.Reason, name)
		}
	}
	var nilPolicy *Policy
	if d := nilPolicy.Decide(call("read", "path", "a"), Facts{}); d.Action != ActionBlock {
		t.Errorf("nil policy: %+v", d)
	}
	if d := (&Policy{}).Decide(call("read", "path", "a"), Facts{}); d.Action != ActionBlock {
		t.Errorf("zero policy: %+v", d)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	for _, d := range []string{filepath.Join(home, ".pi"), filepath.Join(proj, ".pi")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// No files: the base policy.
	p, err := Load(home, proj)
	if err != nil || p.Mode() != ModeSourceWrite {
		t.Fatalf("Load without files: %v, mode %q", err, p.Mode())
	}
	write := func(name, s string) {
		if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(registry.UserPolicy(home), `{"version": 1, "registryMode": "enforce"}`)
	write(registry.ProjectPolicy(proj), `{"version": 1, "registryMode": "advisory", "protectedPaths": ["vault/**"]}`)
	p, err = Load(home, proj)
	if err != nil {
		t.Fatal(err)
	}
	if p.RegistryMode() != RegistryEnforce || !strings.Contains(strings.Join(p.ProtectedPaths(), " "), "vault/**") {
		t.Errorf("registry %s, protected %v", p.RegistryMode(), p.ProtectedPaths())
	}
	if len(p.Violations()) != 1 || p.Violations()[0].File != registry.ProjectPolicy(proj) {
		t.Errorf("violations %v", p.Violations())
	}
	// The home directory as the project: the file is the user's own.
	p, err = Load(home, home)
	if err != nil || len(p.Violations()) != 0 {
		t.Errorf("home as project: %v %v", err, p.Violations())
	}
	// An unreadable file (a directory in its place) blocks.
	bad := filepath.Join(home, "bad")
	if err := os.MkdirAll(filepath.Join(bad, ".pi", "piagent-policy.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err = Load(home, bad)
	if err == nil || p.Decide(call("read", "path", "a"), Facts{Home: home, Cwd: bad}).Action != ActionBlock {
		t.Errorf("unreadable file: err %v", err)
	}
}

func TestBasePolicyParses(t *testing.T) {
	t.Parallel()
	f, err := ParseFile("base-policy.json", BasePolicy())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".env*", "auth.json", ".pi/piagent-state/**", "piagent-profile.json", ".git/**", "~/.ssh/**", "~/.aws/credentials", "~/.config/gh/hosts.yml", ".npmrc", ".netrc", "*.pem", "*.key", "id_rsa*", "~/.pi/agent/auth.json", "~/.pi/piagent-mcp-approvals.json"} {
		if !strings.Contains(strings.Join(f.ProtectedPaths, "\n")+"\n", want+"\n") {
			t.Errorf("base policy lacks %s", want)
		}
	}
	if f.Mode != ModeSourceWrite || f.RegistryMode != RegistryAdvisory || f.PermissionProfile != ProfileStandard {
		t.Errorf("defaults: %q %q %q", f.Mode, f.RegistryMode, f.PermissionProfile)
	}
}

// The sandbox setting: the user chooses; a repository may require it, never
// waive it.
func TestSandboxSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		user, project, want string
		violations          int
	}{
		{"", "", SandboxAuto, 0},
		{`{"version": 1, "sandbox": "required"}`, "", SandboxRequired, 0},
		{"", `{"version": 1, "sandbox": "required"}`, SandboxRequired, 0},
		{`{"version": 1, "sandbox": "required"}`, `{"version": 1, "sandbox": "auto"}`, SandboxRequired, 1},
	} {
		var u, p Input
		if tc.user != "" {
			u = Input{File: "/h/.pi/piagent-policy.json", Data: []byte(tc.user)}
		}
		if tc.project != "" {
			p = Input{File: "/p/.pi/piagent-policy.json", Data: []byte(tc.project)}
		}
		pol, err := Merge(u, p)
		if err != nil {
			t.Fatal(err)
		}
		if pol.Sandbox() != tc.want || len(pol.Violations()) != tc.violations {
			t.Errorf("user %s project %s: sandbox %s, violations %v", tc.user, tc.project, pol.Sandbox(), pol.Violations())
		}
	}
	if _, err := Merge(Input{File: "/h/x.json", Data: []byte(`{"version": 1, "sandbox": "off"}`)}, Input{}); err == nil {
		t.Error("sandbox off accepted")
	}
}

// firstSight (issue 39, item 4): "show" by default; the person's own file
// may say "ask" or "show", a repository's only "ask" (looking first is the
// stricter side); any other value is a file error naming the key.
func TestFirstSight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		user, project, want string
		violation           bool
	}{
		{"", "", FirstSightShow, false},
		{`{"version": 1, "firstSight": "ask"}`, "", FirstSightAsk, false},
		{`{"version": 1, "firstSight": "show"}`, "", FirstSightShow, false},
		{"", `{"version": 1, "firstSight": "ask"}`, FirstSightAsk, false},
		{`{"version": 1, "firstSight": "ask"}`, `{"version": 1, "firstSight": "show"}`, FirstSightAsk, true},
	} {
		p := mustMerge(t, tc.user, tc.project)
		if p.FirstSight() != tc.want || (len(p.Violations()) > 0) != tc.violation {
			t.Errorf("user %s, project %s: %s, violations %v", tc.user, tc.project, p.FirstSight(), p.Violations())
		}
	}
	_, err := ParseFile("p.json", []byte(`{"version": 1, "firstSight": "later"}`))
	if err == nil || !strings.Contains(err.Error(), `firstSight "later" is not "show" or "ask"`) {
		t.Errorf("a bad value: %v", err)
	}
}

// network (issue 44): "registries" by default; the person's own file may
// say "on", "registries" or "off", a repository may only narrow it (on >
// registries > off); allowHosts only in the person's own file, each entry
// a host, *.domain or a loopback address with its port; any other value is
// a file error naming the key.
func TestNetwork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		user, project, want string
		violation, chosen   bool
	}{
		{"", "", NetworkRegistries, false, false},
		{`{"version": 1, "network": "off"}`, "", NetworkOff, false, true},
		{`{"version": 1, "network": "on"}`, "", NetworkOn, false, true},
		{`{"version": 1, "network": "registries"}`, "", NetworkRegistries, false, true},
		{"", `{"version": 1, "network": "off"}`, NetworkOff, false, true},
		{"", `{"version": 1, "network": "on"}`, NetworkRegistries, true, false},
		{`{"version": 1, "network": "on"}`, `{"version": 1, "network": "off"}`, NetworkOff, false, true},
		{`{"version": 1, "network": "on"}`, `{"version": 1, "network": "registries"}`, NetworkRegistries, false, true},
		{`{"version": 1, "network": "off"}`, `{"version": 1, "network": "on"}`, NetworkOff, true, true},
		{`{"version": 1, "network": "off"}`, `{"version": 1, "network": "registries"}`, NetworkOff, true, true},
	} {
		p := mustMerge(t, tc.user, tc.project)
		if p.Network() != tc.want || (len(p.Violations()) > 0) != tc.violation || p.NetworkChosen() != tc.chosen {
			t.Errorf("user %s, project %s: %s (chosen %v), violations %v", tc.user, tc.project, p.Network(), p.NetworkChosen(), p.Violations())
		}
	}
	_, err := ParseFile("p.json", []byte(`{"version": 1, "network": "some"}`))
	if err == nil || !strings.Contains(err.Error(), `network "some" is not "on", "registries" or "off"`) {
		t.Errorf("a bad value: %v", err)
	}
	p := mustMerge(t, `{"version": 1, "allowHosts": ["example.com", "*.corp.test:8443", "127.0.0.1:5432"]}`, `{"version": 1, "allowHosts": ["evil.test"]}`)
	if got := p.AllowHosts(); !slices.Equal(got, []string{"example.com", "*.corp.test:8443", "127.0.0.1:5432"}) || len(p.Violations()) != 1 {
		t.Errorf("allowHosts: %v, violations %v", got, p.Violations())
	}
	for _, bad := range []string{`"127.0.0.1"`, `"a b"`, `"x:99999"`, `"http://x"`} {
		if _, err := ParseFile("p.json", []byte(`{"version": 1, "allowHosts": [`+bad+`]}`)); err == nil || !strings.Contains(err.Error(), "allowHosts") {
			t.Errorf("allowHosts %s: %v", bad, err)
		}
	}
}
