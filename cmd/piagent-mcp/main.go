// Command piagent-mcp is `piagent mcp` under the name the design documents use.
package main

import (
	"os"

	"github.com/piagent/piagent/internal/cli"
	"github.com/piagent/piagent/internal/gcpolicy"
	"github.com/piagent/piagent/internal/ops"
)

func main() {
	// A command reads every config file once and exits: no collection until
	// its heap nears cli.CommandMemory, the default pace after that. The
	// guard helper, which lives long, takes gcpolicy.LongLived's.
	gcpolicy.OneShot(cli.CommandMemory)
	env := cli.OSEnv()
	env.LongLived = func() ops.Pace { return gcpolicy.LongLived() }
	os.Exit(cli.Main("piagent-mcp", os.Args[1:], env))
}
