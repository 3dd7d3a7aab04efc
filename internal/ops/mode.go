package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
)

// Why a mode applies, in EffectiveMode.
const (
	ModeDefault    = "the policy's default"
	ModeChosen     = "chosen for this project"
	ModeUnreadable = "the mode store cannot be read: the narrowest mode"
)

// EffectiveMode is the mode tool calls are decided in for the project at
// dir, and why, as the helper decides it: the person's choice for the
// project when there is one, the policy's default (def) otherwise, and the
// narrowest mode while the mode store cannot be read (err says why).
func (o *Ops) EffectiveMode(dir, def string) (mode, why string, err error) {
	key, kerr := approval.ProjectKey(dir)
	if kerr != nil {
		return def, ModeDefault, nil
	}
	choice, err := policy.ProjectModeChoice(o.Home, key)
	switch {
	case err != nil:
		return policy.ModeReadOnly, ModeUnreadable, err
	case choice != "":
		return choice, ModeChosen, nil
	}
	return def, ModeDefault, nil
}

// ModeChoice is the person's choice of mode for a project.
type ModeChoice struct {
	Project string // the project's key
	Mode    string // "": none (the policy's default applies)
	Default string // the policy's default
	Store   string
}

// SetMode records mode as the project's choice ("" forgets it) and
// answers the choice now; with set false it only answers.
func (o *Ops) SetMode(dir string, set bool, mode string) (ModeChoice, error) {
	key, err := approval.ProjectKey(dir)
	if err != nil {
		return ModeChoice{}, err
	}
	store := registry.ModeStore(o.Home)
	fix := text("piagent never overwrites a file it cannot read: fix it, or remove it (rm " + store + ") and choose again")
	if set {
		if mode != "" && !slices.Contains(policy.Modes, mode) {
			err := fmt.Errorf("unknown mode %q (modes: %s)", mode, strings.Join(policy.Modes, ", "))
			for _, m := range policy.Modes {
				if strings.EqualFold(m, mode) {
					// Modes are camelCase: readonly is readOnly.
					return ModeChoice{}, &Error{Kind: Usage, Err: err, Hints: []gate.Fix{text("did you mean '" + m + "'? piagent policy mode " + m)}}
				}
			}
			return ModeChoice{}, &Error{Kind: Usage, Err: err}
		}
		if err := policy.SetProjectMode(o.Home, key, mode); err != nil {
			return ModeChoice{}, refused(err, fix)
		}
	}
	choice, err := policy.ProjectModeChoice(o.Home, key)
	if err != nil {
		return ModeChoice{}, refused(fmt.Errorf("%w; until it is fixed every tool call is decided in mode readOnly", err), fix)
	}
	out := ModeChoice{Project: key, Mode: choice, Store: store}
	if choice == "" {
		p, _ := policy.Load(o.Home, dir)
		out.Default = p.Mode()
	}
	return out, nil
}
