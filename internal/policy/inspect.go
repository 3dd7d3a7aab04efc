package policy

import (
	"strings"
)

// Inspection is one tool call read once: its input walked (extract) on
// first need. Every layer of the decision — the gate's self-protection
// (Self) and the tool policy (DecideInspection) — reads the same
// Inspection, so a call's input is walked once; a command is parsed once
// because shell.Parse keeps the lines it read last.
type Inspection struct {
	Call   Call
	walked bool
	x      extraction
}

// Inspect starts the inspection of one call.
func Inspect(c Call) Inspection { return Inspection{Call: c} }

// extraction is the input walked, once, for every layer that reads it.
func (in *Inspection) extraction() *extraction {
	if !in.walked {
		in.x, in.walked = extract(in.Call), true
	}
	return &in.x
}

// command is the call's shell command: bash's, or a command field of any
// other tool ("" when it has none).
func (in *Inspection) command() (string, bool) {
	cmd, ok := in.Call.Input["command"].(string)
	return cmd, ok
}

// pathLike reports whether a string value could name a file: a value with
// a line break, or longer than 4 KiB, is content.
func pathLike(s string) bool { return len(s) < 4096 && !strings.Contains(s, "\n") }
