package ops

import (
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/guard"
)

// Call is one tool call, as Pi's tool_call event carries it.
type Call = guard.Call

// CallDecision is the answer to "may this call run?".
type CallDecision = guard.Decision

// The actions a CallDecision carries.
const (
	Allow   = guard.Allow
	Block   = guard.Block
	Confirm = guard.Confirm
	Warn    = guard.Warn
)

// Engine is the one answer to "may this run?" for the project at dir, as
// the helper and policy check, redact and show ask it.
func (o *Ops) Engine(dir string) *engine.Engine {
	return &engine.Engine{Home: o.Home, Cwd: dir, Getenv: o.Getenv, LookupEnv: o.LookupEnv, Binaries: o.Binaries}
}
