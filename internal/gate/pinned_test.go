package gate

import (
	"slices"
	"testing"
)

// TestCodePaths: the variables that make a program load code name the
// files and folders it loads; a blank value names nothing (it used to
// stop the gate with an index out of range for BASH_ENV and its kin).
func TestCodePaths(t *testing.T) {
	for _, c := range []struct {
		name, value string
		files, dirs []string
	}{
		{"NODE_OPTIONS", "--require ./hook.js --max-old-space-size=4096 --import=./esm.mjs", []string{"./hook.js", "./esm.mjs"}, nil},
		{"BASH_ENV", "./env.sh extra", []string{"./env.sh"}, nil},
		{"BASH_ENV", "   ", nil, nil},
		{"GIT_SSH_COMMAND", "\t", nil, nil},
		{"RUBYOPT", "-rbundler/setup -W0", []string{"bundler/setup"}, nil},
		{"JAVA_TOOL_OPTIONS", "-javaagent:agent.jar=opts -Xmx1g", []string{"agent.jar"}, nil},
		{"LD_PRELOAD", "a.so:b.so", []string{"a.so", "b.so"}, nil},
		{"PYTHONPATH", "lib:vendor", nil, []string{"lib", "vendor"}},
		{"DYLD_INSERT_LIBRARIES", "x.dylib", nil, []string{"x.dylib"}},
		{"TOKEN", "secret value", nil, nil},
	} {
		files, dirs := CodePaths(c.name, c.value)
		if !slices.Equal(files, c.files) || !slices.Equal(dirs, c.dirs) {
			t.Errorf("CodePaths(%s, %q) = %q, %q; want %q, %q", c.name, c.value, files, dirs, c.files, c.dirs)
		}
	}
}
