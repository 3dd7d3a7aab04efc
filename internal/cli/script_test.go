package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"piagent":     func() { os.Exit(Main("piagent", os.Args[1:], OSEnv())) },
		"piagent-mcp": func() { os.Exit(Main("piagent-mcp", os.Args[1:], OSEnv())) },
	})
}

// TestScripts runs the CLI end to end: each script in testdata/script lays
// out a fake home and project, runs the commands and checks their output,
// exit status and files.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			proj := filepath.Join(e.WorkDir, "proj")
			for _, d := range []string{home, proj} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			e.Setenv("HOME", home)
			e.Setenv("PROJ", proj)
			e.Setenv("PI_CODING_AGENT_DIR", "")
			e.Setenv("PI_MCP_CONFIG_MODE", "")
			e.Setenv("MCP_DIRECT_TOOLS", "")
			e.Setenv("PIAGENT_NO_MCP_NOTICE", "")
			return nil
		},
		RequireExplicitExec: false,
	})
}
