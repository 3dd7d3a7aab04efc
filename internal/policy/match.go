package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A glob is a compiled path pattern: a list of segments matched against a
// path's segments, case-insensitively. "**" is a segment that matches zero or
// more segments; inside a segment "*" matches any run of characters, "?" one
// character and "[…]" one character of a class. Braces are expanded when the
// pattern is compiled.
type glob struct {
	src    string // the pattern as written
	anchor anchor // where its first segment sits
	segs   []gseg // "**" segments are nil-token segments with dstar set
	single bool   // the pattern names one segment (a file name), used for samples
}

type anchor int

const (
	anyDepth anchor = iota // no leading "/" or "~/": matches at any depth
	absolute               // leading "/"
	home                   // leading "~/"
)

type gseg struct {
	dstar   bool
	fromVar bool   // a shell expansion: may begin with a dot
	lit     string // set when the segment has no wildcard; lower case
	toks    []tok
}

type tokKind uint8

const (
	tLit tokKind = iota
	tAny
	tStar
	tClass
)

type tok struct {
	kind   tokKind
	r      rune
	neg    bool
	ranges []rune // pairs lo, hi
}

func (t tok) matches(r rune) bool {
	switch t.kind {
	case tLit:
		return t.r == r
	case tAny:
		return true
	case tClass:
		in := false
		for i := 0; i+1 < len(t.ranges); i += 2 {
			if t.ranges[i] <= r && r <= t.ranges[i+1] {
				in = true
				break
			}
		}
		return in != t.neg
	}
	return false
}

// maxBraceAlternatives bounds brace expansion so that a hostile pattern cannot
// make the policy compile forever; beyond it the pattern is an error.
const maxBraceAlternatives = 64

// compileGlobs compiles a pattern, expanding braces, into one glob per
// alternative.
func compileGlobs(pattern string) ([]glob, error) {
	if strings.TrimSpace(pattern) == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	alts, err := expandBraces(pattern, maxBraceAlternatives)
	if err != nil {
		return nil, err
	}
	out := make([]glob, 0, len(alts))
	for _, a := range alts {
		g, err := compileGlob(a, pattern, true)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// compileGlob compiles one brace-free pattern. With wild false every
// character is literal (a concrete path).
func compileGlob(p, src string, wild bool) (glob, error) {
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	g := glob{src: src}
	switch {
	case strings.HasPrefix(p, "~/") || p == "~":
		g.anchor = home
		p = strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
	case strings.HasPrefix(p, "/"):
		g.anchor = absolute
		p = strings.TrimLeft(p, "/")
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == "**" && wild {
			if n := len(g.segs); n > 0 && g.segs[n-1].dstar {
				continue
			}
			g.segs = append(g.segs, gseg{dstar: true})
			continue
		}
		seg, err := compileSeg(s, wild)
		if err != nil {
			return glob{}, fmt.Errorf("pattern %q: %w", src, err)
		}
		g.segs = append(g.segs, seg)
	}
	if len(g.segs) == 0 && g.anchor == anyDepth {
		return glob{}, fmt.Errorf("pattern %q names nothing", src)
	}
	g.single = len(g.segs) == 1 && !g.segs[0].dstar
	if g.anchor == anyDepth {
		g.segs = append([]gseg{{dstar: true}}, g.segs...)
	}
	return g, nil
}

func compileSeg(s string, wild bool) (gseg, error) {
	if !wild || !strings.ContainsAny(s, "*?[") {
		return gseg{lit: s}, nil
	}
	var toks []tok
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != tStar {
				toks = append(toks, tok{kind: tStar})
			}
			i += n
		case '?':
			toks = append(toks, tok{kind: tAny})
			i += n
		case '[':
			t, w, err := parseClass(s[i:])
			if err != nil {
				return gseg{}, err
			}
			toks = append(toks, t)
			i += w
		default:
			toks = append(toks, tok{kind: tLit, r: r})
			i += n
		}
	}
	return gseg{toks: toks}, nil
}

func parseClass(s string) (tok, int, error) {
	t := tok{kind: tClass}
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		t.neg = true
		i++
	}
	first := true
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == ']' && !first {
			if len(t.ranges) == 0 {
				return tok{}, 0, fmt.Errorf("empty character class")
			}
			return t, i + n, nil
		}
		first = false
		i += n
		lo, hi := r, r
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			h, m := utf8.DecodeRuneInString(s[i+1:])
			hi = h
			i += 1 + m
		}
		if hi < lo {
			return tok{}, 0, fmt.Errorf("bad character range")
		}
		t.ranges = append(t.ranges, lo, hi)
	}
	return tok{}, 0, fmt.Errorf("unclosed character class")
}

// expandBraces expands {a,b} alternatives (nested allowed), up to limit
// results.
func expandBraces(p string, limit int) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			body := p[open+1 : i]
			var parts []string
			d, start := 0, 0
			for j := 0; j < len(body); j++ {
				switch body[j] {
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						parts = append(parts, body[start:j])
						start = j + 1
					}
				}
			}
			parts = append(parts, body[start:])
			if len(parts) == 1 {
				// "{x}" is literal text in most shells; keep it as written.
				rest, err := expandBraces(p[i+1:], limit)
				if err != nil {
					return nil, err
				}
				out := make([]string, 0, len(rest))
				for _, r := range rest {
					out = append(out, p[:i+1]+r)
				}
				return out, nil
			}
			var out []string
			for _, part := range parts {
				sub, err := expandBraces(p[:open]+part+p[i+1:], limit)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
				if len(out) > limit {
					return nil, fmt.Errorf("pattern %q has more than %d brace alternatives", p, limit)
				}
			}
			return out, nil
		}
	}
	return []string{p}, nil
}

// segMatch reports whether the concrete segment name (lower case) matches seg.
func segMatch(seg gseg, name string) bool {
	if seg.toks == nil {
		return seg.lit == name
	}
	return tokMatch(seg.toks, name)
}

func tokMatch(toks []tok, s string) bool {
	// Iterative wildcard matching with single-star backtracking.
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		r, n := utf8.DecodeRuneInString(s[si:])
		if ti < len(toks) && toks[ti].kind == tStar {
			starT, starS = ti, si
			ti++
			continue
		}
		if ti < len(toks) && toks[ti].matches(r) {
			ti++
			si += n
			continue
		}
		if starT >= 0 {
			_, m := utf8.DecodeRuneInString(s[starS:])
			starS += m
			si = starS
			ti = starT + 1
			continue
		}
		return false
	}
	for ti < len(toks) && toks[ti].kind == tStar {
		ti++
	}
	return ti == len(toks)
}

// matchSegs reports whether the concrete path segments match the glob
// segments.
func matchSegs(pat []gseg, segs []string) bool {
	for len(pat) > 0 {
		p := pat[0]
		if p.dstar {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 || !segMatch(p, segs[0]) {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// matchPath reports whether a cleaned absolute lower-case path, split into
// segments, matches g. homeSegs are the home directory's segments.
func (g *glob) matchPath(segs, homeSegs []string) bool {
	switch g.anchor {
	case home:
		if len(homeSegs) == 0 || len(segs) < len(homeSegs) {
			return false
		}
		for i, h := range homeSegs {
			if segs[i] != h {
				return false
			}
		}
		return matchSegs(g.segs, segs[len(homeSegs):])
	default:
		return matchSegs(g.segs, segs)
	}
}

// splitPath splits a slash path into its non-empty segments.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// --- intersection of two globs: can one concrete path match both? ---

// segToks returns a segment's tokens, literal segments spelled out.
func segToks(s gseg) []tok {
	if s.toks != nil {
		return s.toks
	}
	t := make([]tok, 0, len(s.lit))
	for _, r := range s.lit {
		t = append(t, tok{kind: tLit, r: r})
	}
	return t
}

// segsIntersect reports whether some segment name matches both a and b. With
// noLeadingDot, a name matched by a wildcard at the start of a cannot begin
// with "." (the shell's rule for globs without dotglob).
func segsIntersect(a, b gseg, noLeadingDot bool) bool {
	ta, tb := segToks(a), segToks(b)
	if noLeadingDot && !a.fromVar && len(ta) > 0 && ta[0].kind != tLit && len(tb) > 0 && tb[0].kind == tLit && tb[0].r == '.' {
		return false
	}
	return intersect(ta, tb, func(t tok) bool { return t.kind == tStar }, toksCompatible)
}

// toksCompatible over-approximates: two single-character tokens are
// compatible unless both are literals that differ, or a literal falls outside
// a class.
func toksCompatible(a, b tok) bool {
	switch {
	case a.kind == tLit && b.kind == tLit:
		return a.r == b.r
	case a.kind == tLit:
		return b.matches(a.r)
	case b.kind == tLit:
		return a.matches(b.r)
	}
	return true
}

// globsIntersect reports whether some path matches both segment lists.
func globsIntersect(a, b []gseg, noLeadingDot bool) bool {
	return intersect(a, b, func(g gseg) bool { return g.dstar },
		func(x, y gseg) bool { return segsIntersect(x, y, noLeadingDot) })
}

// intersect reports whether two patterns, sequences of elements where star
// elements match any run (possibly empty) of the other side, can match a
// common sequence: the characters of one segment, or the segments of one
// path. Memoised over positions, so it is quadratic at worst.
func intersect[T any](a, b []T, star func(T) bool, compatible func(x, y T) bool) bool {
	memo := make(map[[2]int]bool)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		memo[k] = false
		var res bool
		switch {
		case i == len(a) && j == len(b):
			res = true
		case i < len(a) && star(a[i]):
			res = rec(i+1, j) || (j < len(b) && rec(i, j+1))
		case j < len(b) && star(b[j]):
			res = rec(i, j+1) || (i < len(a) && rec(i+1, j))
		case i == len(a) || j == len(b):
			res = false
		default:
			res = compatible(a[i], b[j]) && rec(i+1, j+1)
		}
		memo[k] = res
		return res
	}
	return rec(0, 0)
}

// absSegs returns g's segments as seen from the file-system root: home-anchored
// patterns get the home directory in front.
func (g *glob) absSegs(homeSegs []string) []gseg {
	if g.anchor != home {
		return g.segs
	}
	out := make([]gseg, 0, len(homeSegs)+len(g.segs))
	for _, h := range homeSegs {
		out = append(out, gseg{lit: h})
	}
	return append(out, g.segs...)
}
