package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/piagent/piagent/internal/secret"
)

// RedactReport says what Redact removed. It never holds removed text.
type RedactReport struct {
	Removed int              `json:"removed"` // lines or paths from protected files
	Secrets []secret.Finding `json:"secrets,omitempty"`
}

// Redact prepares a tool's output (Pi's tool_result) for the model. For
// grep, find, ls and bash it removes every line or path that comes from a
// protected file, putting in place of each run a visible marker that says
// how many went ("[piagent: 3 lines from protected files removed]"). Then,
// for every tool, it replaces secret values with secret's markers.
func (p *Policy) Redact(call Call, content string, f Facts) (string, RedactReport) {
	var rep RedactReport
	out := content
	if p != nil && p.err == nil && p.allowedTools != nil {
		switch call.ToolName {
		case "grep", "find", "ls", "bash":
			out, rep.Removed = p.removeProtected(call, content, &f)
		}
	}
	out, rep.Secrets = secret.Redact(out)
	return out, rep
}

// MarkerText is the line that stands for n removed lines or paths.
func MarkerText(n int, unit string) string {
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("[piagent: %d %s from protected files removed]", n, unit)
}

func (p *Policy) removeProtected(call Call, content string, f *Facts) (string, int) {
	root, realRoot := f.Cwd, ""
	if s, ok := call.Input["path"].(string); ok && s != "" && call.ToolName != "bash" {
		r := resolvePath(s, f)
		root, realRoot = r.clean, r.real
	}
	root = cleanAbs(root, "/")
	hs := homeSegs(f.Home)
	hints := p.hints()
	unit := "line"
	if call.ToolName == "find" || call.ToolName == "ls" {
		unit = "path"
	}
	// Paths are judged relative to the search root, and for grep on a single
	// file relative to its folder too (grep prints the base name then). A
	// root reached through a link (a link the repository ships to the home,
	// /proc/self/root/home/u) is judged where it leads as well: rg prints
	// the paths below the name it was given, and they are the files there.
	bases := []string{root}
	if realRoot = cleanAbs(realRoot, "/"); realRoot != "" && realRoot != root {
		bases = append(bases, realRoot)
	}
	if call.ToolName == "grep" {
		for _, b := range bases[:len(bases):len(bases)] {
			bases = append(bases, path.Dir(b))
		}
	}
	cache := map[string]bool{}
	protected := func(rel string, real bool) bool {
		rel = strings.TrimSuffix(rel, "/")
		if rel == "" {
			return false
		}
		if !real && !hasHint(rel, hints) {
			return false
		}
		if v, ok := cache[rel]; ok {
			return v
		}
		hit := false
		for _, b := range bases {
			ff := *f
			if !real {
				ff.RealPath = nil
			}
			ff.Cwd = b
			if _, ok := p.protectedHit(rel, &ff, hs, true, call.ToolName == "bash"); ok {
				hit = true
				break
			}
		}
		cache[rel] = hit
		return hit
	}
	lines := strings.Split(content, "\n")
	kept := make([]string, 0, len(lines))
	total, run := 0, 0
	flush := func() {
		if run > 0 {
			kept = append(kept, MarkerText(run, unit))
			total += run
			run = 0
		}
	}
	for _, line := range lines {
		var drop bool
		switch call.ToolName {
		case "grep":
			// rg does not follow symlinks it meets while walking (Pi passes no
			// --follow), and the search root was resolved when the call was
			// decided; so the printed path is the file that was read.
			drop = grepLineProtected(line, protected)
		case "find", "ls":
			drop = protected(strings.TrimRight(line, "\r"), false)
		default:
			drop = bashLineProtected(line, protected)
		}
		if drop {
			run++
			continue
		}
		flush()
		kept = append(kept, line)
	}
	flush()
	if total == 0 {
		return content, 0
	}
	return strings.Join(kept, "\n"), total
}

// grepLineProtected reads Pi's grep format, "path:N: text" for a match and
// "path-N- text" for context, trying every place the separator could be.
func grepLineProtected(line string, protected func(string, bool) bool) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != ':' && c != '-' {
			continue
		}
		j := i + 1
		for j < len(line) && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j == i+1 || j >= len(line) || line[j] != c {
			continue
		}
		if protected(line[:i], false) {
			return true
		}
	}
	return false
}

// bashLineProtected judges free shell output: a line is dropped when it is a
// protected path, starts with one ("path:…", as grep -r prints), or holds
// one as a word (ls -l, find).
func bashLineProtected(line string, protected func(string, bool) bool) bool {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "[piagent: ") {
		return false
	}
	if protected(t, false) {
		return true
	}
	if i := strings.IndexByte(t, ':'); i > 0 && protected(t[:i], false) {
		return true
	}
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return strings.ContainsRune(" \t\"'`,;()<>|=:", r) }) {
		if protected(w, false) {
			return true
		}
	}
	return false
}

// hints are lower-case texts one of which every protected path contains: the
// longest literal run of each pattern's last named segment.
func (p *Policy) hints() []string {
	if p.hintCache != nil {
		return p.hintCache
	}
	var hs []string
	for _, set := range [2][]entry{p.protected, p.shellProtected} {
		for _, e := range set {
			for _, g := range e.globs {
				h := ""
				for i := len(g.segs) - 1; i >= 0; i-- {
					s := g.segs[i]
					if s.dstar {
						continue
					}
					h = longestLiteral(s)
					break
				}
				if h == "" {
					return []string{""} // a pattern with no literal: check everything
				}
				hs = append(hs, h)
			}
		}
	}
	return hs
}

func longestLiteral(s gseg) string {
	if s.toks == nil {
		return s.lit
	}
	best, cur := "", []rune{}
	for _, t := range s.toks {
		if t.kind == tLit {
			cur = append(cur, t.r)
			continue
		}
		if len(cur) > len([]rune(best)) {
			best = string(cur)
		}
		cur = cur[:0]
	}
	if len(cur) > len([]rune(best)) {
		best = string(cur)
	}
	return best
}

func hasHint(s string, hints []string) bool {
	low := strings.ToLower(s)
	for _, h := range hints {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}
