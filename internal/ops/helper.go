package ops

import (
	"errors"
	"io"

	"github.com/piagent/piagent/internal/helper"
)

// The helper protocol the Pi extension speaks, and its version: a
// mismatched pair fails closed.
const (
	HelperProtocol = helper.Protocol
	HelperVersion  = helper.Version
)

// ServeHelper answers the Pi extension for the project at dir, one JSON
// object a line from in to out, until in ends.
// Pace is told when the helper is busy and when it waits (helper.Pace);
// nil for none.
type Pace = helper.Pace

func (o *Ops) ServeHelper(dir string, in io.Reader, out io.Writer, pace Pace) error {
	s := &helper.Server{Engine: o.Engine(dir), Build: Version, Pace: pace}
	err := s.Serve(in, out)
	if errors.Is(err, helper.ErrFraming) {
		return refused(err, text("the helper speaks one JSON object per line; see docs/helper-protocol.md"))
	}
	return err
}
