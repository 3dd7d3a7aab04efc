package policy

import (
	"strings"

	"github.com/piagent/piagent/internal/shell"
)

// Inspection is one tool call read once: its input walked (extract) and its
// shell commands parsed, each on first need. Every layer of the decision —
// the gate's self-protection (Self) and the tool policy (Decide) — reads
// the same Inspection, so a call is walked once and a command parsed once.
type Inspection struct {
	Call   Call
	x      *extraction
	parsed map[string]parsed
}

type parsed struct {
	a   *shell.Analysis
	err error
}

// Inspect starts the inspection of one call.
func Inspect(c Call) *Inspection { return &Inspection{Call: c} }

// extraction is the input walked, once.
func (in *Inspection) extraction() *extraction {
	if in.x == nil {
		x := extract(in.Call)
		in.x = &x
	}
	return in.x
}

// parse is shell.Parse of src, once per inspection.
func (in *Inspection) parse(src string) (*shell.Analysis, error) {
	if r, ok := in.parsed[src]; ok {
		return r.a, r.err
	}
	a, err := shParse(src)
	if in.parsed == nil {
		in.parsed = map[string]parsed{}
	}
	in.parsed[src] = parsed{a, err}
	return a, err
}

// command is the call's shell command: bash's, or a command field of any
// other tool ("" when it has none).
func (in *Inspection) command() (string, bool) {
	cmd, ok := in.Call.Input["command"].(string)
	return cmd, ok
}

// strings are every string value in the input, for the self-protection's
// look at tools it does not know: any of them could name a file the tool
// writes. A value with a line break, or longer than 4 KiB, is content.
func (x *extraction) addString(s string) {
	if len(s) < 4096 && !strings.Contains(s, "\n") {
		x.strs = append(x.strs, s)
	}
}
