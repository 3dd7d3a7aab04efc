package guard

import "github.com/piagent/piagent/internal/policy"

// self applies the gate's protection of itself (policy's Self layer) to
// the call's inspection, against this snapshot's registry. It reports
// stop=true with the decision when the call is stopped.
func (s *Snapshot) self(in *policy.Inspection) (Decision, bool) {
	d, stop := in.Self(&s.guarded)
	if !stop {
		return Decision{}, false
	}
	return Decision{Action: d.Action, Code: d.Code, Reason: d.Reason}, true
}
