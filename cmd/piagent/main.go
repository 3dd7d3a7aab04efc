// Command piagent is the guardrail for coding agents: MCP approval, the tool guard and the Pi launcher.
package main

import (
	"os"

	"github.com/piagent/piagent/internal/cli"
	"github.com/piagent/piagent/internal/gcpolicy"
	"github.com/piagent/piagent/internal/netproxy"
)

func main() {
	// One command's network proxy, started by piagent-sandbox (or by this
	// binary's sandbox exec) at the command's first connection.
	if len(os.Args) == 2 && os.Args[1] == netproxy.ServeArg {
		os.Exit(netproxy.ServeMain())
	}
	// A command reads every config file once and exits: no collection until
	// its heap nears cli.CommandMemory, the default pace after that. The
	// guard helper, which lives long, takes gcpolicy.LongLived's.
	gcpolicy.OneShot(cli.CommandMemory)
	env := cli.OSEnv()
	env.LongLived = gcpolicy.LongLived
	os.Exit(cli.Main("piagent", os.Args[1:], env))
}
