package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoadSettingsAgrees: what LoadSettings answers is what Load answers,
// for the user's and a repository's files, raising, lowering and passing.
func TestLoadSettingsAgrees(t *testing.T) {
	for _, tc := range []struct{ user, proj string }{
		{"", ""},
		{`{"version":1,"sandbox":"required","passEnv":["GITHUB_TOKEN"]}`, ""},
		{`{"version":1,"sandbox":"namespaces"}`, `{"version":1,"sandbox":"auto"}`},
		{``, `{"version":1,"sandbox":"namespaces","passEnv":["ANTHROPIC_API_KEY"]}`},
		{`{"version":1,"serverSandbox":"off"}`, `{"version":1,"serverSandbox":"off"}`},
		{`{"version":1,"firstSight":"ask"}`, `{"version":1,"firstSight":"show"}`},
		{``, `{"version":1,"firstSight":"ask"}`},
		{`{"version":1,"network":"off"}`, `{"version":1,"network":"on"}`},
		{``, `{"version":1,"network":"off"}`},
		{`{"version":1,"sandbox":"bogus"}`, ""},
		{`{"version":1,`, ""},
	} {
		home, proj := t.TempDir(), t.TempDir()
		writePolicies(t, home, proj, tc.user, tc.proj)
		full, ferr := Load(home, proj)
		light, lerr := LoadSettings(home, proj)
		if (ferr == nil) != (lerr == nil) || (full.Err() == nil) != (light.Err() == nil) {
			t.Errorf("%+v: errors differ: %v / %v", tc, ferr, lerr)
			continue
		}
		if ferr != nil {
			continue
		}
		if full.Sandbox() != light.Sandbox() || full.ServerSandbox() != light.ServerSandbox() || !slices.Equal(full.PassEnv(), light.PassEnv()) || full.FirstSight() != light.FirstSight() || full.Network() != light.Network() {
			t.Errorf("%+v: Load %s %s %v, LoadSettings %s %s %v", tc, full.Sandbox(), full.ServerSandbox(), full.PassEnv(), light.Sandbox(), light.ServerSandbox(), light.PassEnv())
		}
	}
}

// writePolicies writes the user's and the project's policy files (none
// where the text is empty).
func writePolicies(t *testing.T, home, proj, user, project string) {
	t.Helper()
	for _, f := range []struct{ path, data string }{{filepath.Join(home, ".pi", "piagent-policy.json"), user}, {filepath.Join(proj, ".pi", "piagent-policy.json"), project}} {
		if f.data == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
