package policy

import (
	"encoding/json"
	"strings"

	"github.com/piagent/piagent/internal/shell"
)

// Inspection is one tool call read once: its input walked (extract) and its
// shell commands parsed, each on first need. Every layer of the decision —
// the gate's self-protection (Self) and the tool policy (Decide) — reads
// the same Inspection, so a call is walked once and a command parsed once.
type Inspection struct {
	Call   Call
	walked bool
	x      extraction
	last   parsed            // the last command parsed (most calls have one)
	parsed map[string]parsed // the others, for a tool with several
}

type parsed struct {
	src string
	a   *shell.Analysis
	err error
}

// Inspect starts the inspection of one call.
func Inspect(c Call) Inspection { return Inspection{Call: c} }

// Walk walks the input now, for every layer that follows: a caller that
// will ask the tool policy calls it before Self, so that the one walk
// serves both. Without it, Self looks at the input's strings without
// keeping anything (the gate alone, no policy).
func (in *Inspection) Walk() { in.extraction() }

// extraction is the input walked, once.
func (in *Inspection) extraction() *extraction {
	if !in.walked {
		in.x, in.walked = extract(in.Call), true
	}
	return &in.x
}

// parse is shell.Parse of src, once per inspection.
func (in *Inspection) parse(src string) (*shell.Analysis, error) {
	if in.last.a != nil || in.last.err != nil {
		if in.last.src == src {
			return in.last.a, in.last.err
		}
		if r, ok := in.parsed[src]; ok {
			return r.a, r.err
		}
		if in.parsed == nil {
			in.parsed = map[string]parsed{}
		}
		in.parsed[in.last.src] = in.last
	}
	a, err := shParse(src)
	in.last = parsed{src, a, err}
	return a, err
}

// command is the call's shell command: bash's, or a command field of any
// other tool ("" when it has none).
func (in *Inspection) command() (string, bool) {
	cmd, ok := in.Call.Input["command"].(string)
	return cmd, ok
}

// addString keeps a string value of the input for the self-protection's
// look at tools it does not know: any of them could name a file the tool
// writes (pathLike).
func (x *extraction) addString(s string) {
	if x.keepStrs && pathLike(s) {
		x.strs = append(x.strs, s)
	}
}

// pathLike reports whether a string value could name a file: a value with
// a line break, or longer than 4 KiB, is content.
func pathLike(s string) bool { return len(s) < 4096 && !strings.Contains(s, "\n") }

// firstProtected finds the first path-like string value in v (found under
// key, depth containers deep; the input object is depth 1) that names a
// guarded file, without keeping anything; deep is set when v nests deeper
// than MaxInspectionDepth. It sees the strings extract keeps in strs.
func (g *Guarded) firstProtected(key string, v any, depth int) (hit string, found, deep bool) {
	switch t := v.(type) {
	case string:
		if pathLike(t) {
			if hit, found = g.isProtected(t); found {
				return hit, true, false
			}
		}
		if !mayHoldJSON(t) {
			return "", false, false
		}
		if s := strings.TrimSpace(t); len(s) > 1 && (s[0] == '{' || s[0] == '[') && !contentFields[key] {
			var inner any
			if json.Unmarshal([]byte(s), &inner) == nil {
				return g.firstProtected(key, inner, depth+1)
			}
		}
	case map[string]any:
		if depth+1 > MaxInspectionDepth {
			return "", false, true
		}
		for k, e := range t {
			if hit, found, deep = g.firstProtected(k, e, depth+1); found || deep {
				return hit, found, deep
			}
		}
	case []any:
		if depth+1 > MaxInspectionDepth {
			return "", false, true
		}
		for _, e := range t {
			if hit, found, deep = g.firstProtected(key, e, depth+1); found || deep {
				return hit, found, deep
			}
		}
	}
	return "", false, false
}

// mayHoldJSON is a first look at whether s could be a JSON object or array:
// it starts with a brace, a bracket or white space.
func mayHoldJSON(s string) bool {
	if len(s) < 2 {
		return false
	}
	switch s[0] {
	case '{', '[', ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return s[0] >= 0x80 // Unicode white space
}
