package guard

// Helpers only the tests use.

// Decide answers one tool call with the snapshot's facts.
func (s *Snapshot) Decide(c Call) Decision { return s.DecideFacts(c, s.opts.Facts) }
