package ops

import (
	"fmt"
	"strings"

	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/secret"
	"github.com/piagent/piagent/internal/shquote"
)

// Transport names how the adapter reaches a server.
func Transport(e mcpconfig.Entry) string {
	n := 0
	t := ""
	if _, ok := e["command"].(string); ok {
		n, t = n+1, "stdio"
	}
	if _, ok := e["url"].(string); ok {
		n, t = n+1, "http"
	}
	if _, ok := e["socket"].(string); ok {
		n, t = n+1, "socket"
	}
	if n != 1 {
		return "invalid"
	}
	return t
}

// Target is what a server runs or reaches, masked. Only the transport keys
// are masked: the rest of the entry never reaches this column.
func Target(e mcpconfig.Entry) string {
	masked := func(k string) string {
		if v, ok := e[k].(string); ok {
			return secret.MaskString(v)
		}
		return fmt.Sprint(secret.MaskValue(e[k]))
	}
	switch Transport(e) {
	case "stdio":
		var b strings.Builder
		b.Grow(64)
		b.WriteString(masked("command"))
		if args, ok := e["args"].([]any); ok {
			for _, x := range args {
				b.WriteByte(' ')
				if s, ok := x.(string); ok {
					b.WriteString(shquote.Quote(secret.MaskString(s)))
				} else {
					b.WriteString(shquote.Quote(fmt.Sprint(secret.MaskValue(x))))
				}
			}
		}
		return b.String()
	case "http":
		return masked("url")
	case "socket":
		return masked("socket")
	}
	return "-"
}
