package ops

import (
	"fmt"

	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
)

// Modes are the policy's modes, narrowest first as policy lists them.
var Modes = policy.Modes

// PolicyView is policy show's answer: the effective policy, where each
// part came from, and the mode tool calls are decided in here.
type PolicyView struct {
	Mode              string             `json:"mode"`
	RegistryMode      string             `json:"registryMode"`
	PermissionProfile string             `json:"permissionProfile"`
	ProtectedPaths    []string           `json:"protectedPaths"`
	ShellProtected    []string           `json:"shellProtectedPaths"`
	AllowReadPaths    []string           `json:"allowReadPaths"`
	Sources           []policy.Source    `json:"sources"`
	Violations        []policy.Violation `json:"violations"`
	Error             string             `json:"error,omitempty"`
	Sandbox           string             `json:"sandbox"`
	SandboxStatus     sandbox.Status     `json:"sandboxStatus"`
	// EffectiveMode is the mode tool calls are decided in here: the
	// person's choice, else the policy's default; readOnly when the
	// mode store cannot be read.
	EffectiveMode string `json:"effectiveMode"`
	// Why the effective mode applies (EffectiveMode's why).
	Why string `json:"-"`
}

// ShowPolicy is the effective policy for the project at dir, as the
// decision engine the Pi extension asks reads it; nil when there is none
// to show. An error beside a view is what keeps every call blocked or
// narrowed: a policy that cannot be read, or a mode store that cannot.
func (o *Ops) ShowPolicy(dir string) (*PolicyView, error) {
	p, err := o.Engine(dir).Policy()
	if err != nil {
		return nil, err
	}
	effective, why, modeErr := o.EffectiveMode(dir, p.Mode())
	out := &PolicyView{p.Mode(), p.RegistryMode(), p.PermissionProfile(), p.ProtectedPaths(), p.ShellProtectedPaths(), p.AllowReadPaths(),
		p.Sources(), p.Violations(), "", p.Sandbox(), sandbox.Probe(), effective, why}
	if p.Err() != nil {
		out.Error = p.Err().Error()
		return out, refused(fmt.Errorf("the policy cannot be read, so every tool call is blocked: %w", p.Err()))
	}
	if modeErr != nil {
		return out, refused(fmt.Errorf("%w; every tool call is decided in mode readOnly until it is fixed", modeErr),
			text("fix it, or remove it (rm "+registry.ModeStore(o.Home)+") and choose again with 'piagent policy mode MODE'"))
	}
	return out, nil
}
