// Command piagent-sandbox is `piagent sandbox exec` in a binary of its own:
// it starts before every command the agent runs and every server piagent
// starts, and twice each time (the command's parent, then the init in the
// sandbox's namespaces), so it links only what confinement needs. piagent
// uses it when it is installed beside piagent; without it, piagent sandbox
// exec does the same, more slowly.
package main

import (
	"os"

	"github.com/piagent/piagent/internal/sandboxexec"
)

func main() {
	dir, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	os.Exit(sandboxexec.Main("piagent-sandbox", os.Args[1:], sandboxexec.Env{
		Home: home, Dir: dir, Environ: os.Environ(), Stderr: os.Stderr,
	}))
}
