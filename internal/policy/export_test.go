package policy

import "slices"

// Helpers only the tests use.

// BasePolicy returns the embedded base policy as written, comments included.
func BasePolicy() []byte { return slices.Clone(basePolicyJSON) }

// Changed reports whether Redact changed anything.
func (r RedactReport) Changed() bool { return r.Removed > 0 || len(r.Secrets) > 0 }

// ProjectMode is the stricter cap a project set, or "".
func (p *Policy) ProjectMode() string { return p.projectMode }

// Decide is DecideInspection of a call not inspected yet.
func (p *Policy) Decide(call Call, f Facts) Decision {
	in := Inspect(call)
	return p.DecideInspection(&in, f)
}
