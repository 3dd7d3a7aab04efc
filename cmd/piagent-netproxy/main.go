// Command piagent-netproxy serves one sandboxed command's network proxy
// ("network": "registries"): piagent-sandbox, or piagent's sandbox exec,
// starts it from beside itself at the command's first connection, with
// the listeners and the spec it serves. It is the one binary of piagent's
// that links the network code (net/http, crypto/tls), so the others stay
// small: piagent-sandbox starts before every command, and piagent is the
// guard's long-lived helper. A person never runs it.
package main

import (
	"fmt"
	"os"

	"github.com/piagent/piagent/internal/netproxy"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != netproxy.ServeArg {
		fmt.Fprintln(os.Stderr, "piagent-netproxy: serves a sandboxed command's network proxy; piagent's sandbox starts it, a person does not")
		os.Exit(2)
	}
	os.Exit(netproxy.ServeMain())
}
