package policy

import (
	"fmt"
	"strings"
)

// searchBlock checks a search channel (grep.glob, find.pattern). A glob
// explicitly targets a protected path when the names it most plainly spells
// are protected: each wildcard is filled in the narrowest ways ("*" as
// nothing or ".", "?" as "x" or ".", a class as its first member) and the
// result, under the search root, is matched like a path. So ".env*",
// "[.]env", "*.pem" and "auth.json" are blocked, while "*.json", "*" and
// "**/*" are broad and pass; what a broad search finds in protected files is
// removed from its result by Redact.
func (p *Policy) searchBlock(call Call, c candidate, f *Facts, hs []string) (Decision, bool) {
	root := f.Cwd
	if s, ok := call.Input["path"].(string); ok && s != "" {
		root = resolvePath(s, f).clean
	}
	ff := *f
	ff.Cwd = cleanAbs(root, "/")
	alts, err := expandBraces(c.value, maxBraceAlternatives)
	if err != nil {
		alts = []string{c.value}
	}
	for _, alt := range alts {
		for _, fill := range globFills {
			sample := fillGlob(alt, fill)
			if sample == "" {
				continue
			}
			if rule, ok := p.protectedHit(sample, &ff, hs, true, false); ok {
				return searchDecision(call, c, rule), true
			}
		}
	}
	return Decision{}, false
}

// globFills are the ways fillGlob fills a star and a question mark.
var globFills = [][2]string{{"", "x"}, {".", "."}, {"", "."}}

// fillGlob spells a concrete name a glob matches: "**" segments vanish, "*"
// and "?" become fill, a class its first member.
func fillGlob(g string, fill [2]string) string {
	var b strings.Builder
	segs := strings.Split(strings.ReplaceAll(g, `\`, "/"), "/")
	for i, seg := range segs {
		if seg == "**" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteByte('/')
		}
		for j := 0; j < len(seg); j++ {
			switch seg[j] {
			case '*':
				for j+1 < len(seg) && seg[j+1] == '*' {
					j++
				}
				b.WriteString(fill[0])
			case '?':
				b.WriteString(fill[1])
			case '[':
				t, w, err := parseClass(seg[j:])
				if err != nil {
					b.WriteByte('[')
					continue
				}
				switch {
				case t.neg && !t.matches('.'):
					b.WriteByte('x')
				case t.neg:
					b.WriteByte('.')
				default:
					b.WriteRune(t.ranges[0])
				}
				j += w - 1
			default:
				b.WriteByte(seg[j])
			}
		}
	}
	if strings.HasPrefix(g, "/") {
		return "/" + strings.TrimPrefix(b.String(), "/")
	}
	return b.String()
}

func searchDecision(call Call, c candidate, rule string) Decision {
	return Decision{Action: ActionBlock, Code: CodeSearchProtected, Rule: rule, Subject: c.value,
		Reason: fmt.Sprintf("%s.%s %q targets protected files (rule %q); search without naming them, and piagent removes protected files from the results", call.ToolName, c.field, c.value, rule)}
}
