// Command piagent-mcp is `piagent mcp` under the name the design documents use.
package main

import (
	"os"

	"github.com/piagent/piagent/internal/cli"
)

func main() { os.Exit(cli.Main("piagent-mcp", os.Args[1:], cli.OSEnv())) }
