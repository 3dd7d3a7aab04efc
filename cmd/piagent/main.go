// Command piagent is the guardrail for coding agents: MCP approval, the tool guard and the Pi launcher.
package main

import (
	"os"

	"github.com/piagent/piagent/internal/cli"
)

func main() { os.Exit(cli.Main("piagent", os.Args[1:], cli.OSEnv())) }
