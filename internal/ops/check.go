package ops

import (
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/sandboxexec"
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

// SandboxStatus is what the sandbox enforces on this machine, and the
// agent profile for the project at dir with the person's network choice
// (a policy that cannot be read turns the network off).
func (o *Ops) SandboxStatus(dir string, environ []string) (sandbox.Status, sandbox.Profile) {
	st := sandbox.Probe()
	p := sandboxexec.AgentProfile(sandboxexec.Env{Home: o.Home, Dir: o.Dir, Environ: environ}, dir)
	pol, perr := policy.LoadSettings(o.Home, dir)
	p.SetNetworkOff(perr != nil || pol.Err() != nil || pol.Network() == policy.NetworkOff)
	if !p.NetworkOff && pol.Network() == policy.NetworkRegistries {
		p.Registries, p.AllowHosts = true, pol.AllowHosts()
	}
	return st, p
}
