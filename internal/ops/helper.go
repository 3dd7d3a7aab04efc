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
func (o *Ops) ServeHelper(dir string, in io.Reader, out io.Writer) error {
	s := &helper.Server{Engine: o.Engine(dir), Build: Version}
	err := s.Serve(in, out)
	if errors.Is(err, helper.ErrFraming) {
		return refused(err, text("the helper speaks one JSON object per line; see docs/helper-protocol.md"))
	}
	return err
}
