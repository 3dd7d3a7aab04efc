package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestAgentDir(t *testing.T) {
	t.Parallel()
	pkg := t.TempDir()
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"piConfig": {"name": "tau", "configDir": ".tau"}}`), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"default", nil, "/h/.pi/agent"},
		{"override", map[string]string{"PI_CODING_AGENT_DIR": "/x/agent"}, "/x/agent"},
		{"override with ~", map[string]string{"PI_CODING_AGENT_DIR": "~/a"}, "/h/a"},
		{"override ~ alone", map[string]string{"PI_CODING_AGENT_DIR": "~"}, "/h"},
		{"relative override", map[string]string{"PI_CODING_AGENT_DIR": "rel"}, "/cwd/rel"},
		{"blank override", map[string]string{"PI_CODING_AGENT_DIR": "  "}, "/h/.pi/agent"},
		{"rebranded: config dir", map[string]string{"PI_PACKAGE_DIR": pkg}, "/h/.tau/agent"},
		{"rebranded: variable", map[string]string{"PI_PACKAGE_DIR": pkg, "TAU_CODING_AGENT_DIR": "/t", "PI_CODING_AGENT_DIR": "/ignored"}, "/t"},
		{"unreadable manifest", map[string]string{"PI_PACKAGE_DIR": "/nonexistent", "PI_CODING_AGENT_DIR": "/p"}, "/p"},
	}
	for _, tc := range cases {
		if got := AgentDir("/h", "/cwd", env(tc.env)); got != tc.want {
			t.Errorf("%s: AgentDir = %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := ConfigDirName(env(map[string]string{"PI_PACKAGE_DIR": pkg})); got != ".tau" {
		t.Errorf("ConfigDirName = %s", got)
	}
	if got := ConfigDirName(nil); got != ".pi" {
		t.Errorf("ConfigDirName(nil) = %s", got)
	}
}

func TestWithinAndExpand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p string
		want    bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false}, {"/a", "/", false}, {"/a/b", "/a/b/../c", false},
	} {
		if got := Within(tc.root, filepath.Clean(tc.p)); got != tc.want {
			t.Errorf("Within(%s, %s) = %v", tc.root, tc.p, got)
		}
	}
	if Expand("/h", "~/x") != "/h/x" || Expand("/h", "~") != "/h" || Expand("/h", "~x") != "~x" || Expand("/h", "/y") != "/y" {
		t.Error("Expand")
	}
}
