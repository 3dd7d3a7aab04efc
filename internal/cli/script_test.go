package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/piagent/piagent/internal/sandbox"
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
			// $CMDBIN holds piagent and piagent-mcp alone, $TOOLS the few
			// programs the fake Pi and Node need: PATH=$WORK/bin:$CMDBIN:$TOOLS
			// is a machine without Docker or a browser.
			if bin, err := exec.LookPath("piagent"); err == nil {
				e.Setenv("CMDBIN", filepath.Dir(bin))
			}
			tools := filepath.Join(e.WorkDir, ".tools")
			if err := os.MkdirAll(tools, 0o755); err != nil {
				return err
			}
			for _, name := range []string{"sh", "sed", "awk", "realpath", "mkdir", "touch", "mv", "rm", "cat", "env", "grep", "dirname"} {
				if p, err := exec.LookPath(name); err == nil {
					if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
						return err
					}
				}
			}
			e.Setenv("TOOLS", tools)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "rohome":
				return canMountReadOnly(), nil
			case "sandbox":
				// Under CI a sandbox test that cannot run fails instead.
				return os.Getenv("CI") == "true" || sandbox.Probe().Mechanism != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		RequireExplicitExec: false,
	})
}

var roOnce = sync.OnceValue(func() bool {
	// A private mount namespace where a bind mount can be made read-only:
	// root, or a kernel that allows it (CI runs as root).
	err := exec.Command("unshare", "-m", "sh", "-c", "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp").Run()
	return err == nil
})

func canMountReadOnly() bool { return roOnce() }
