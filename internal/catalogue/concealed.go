package catalogue

import (
	"fmt"
	"unicode/utf8"
)

// MaxText is the longest description or other text a person is expected to
// read whole; a longer one is flagged, since what the model reads past a
// screenful is what a person skims.
const MaxText = 4096

// Classes of concealed content.
const (
	ClassTags       = "Unicode tag characters (invisible text)"
	ClassZeroWidth  = "zero-width characters"
	ClassBidi       = "bidirectional text controls"
	ClassSelectors  = "a run of variation selectors"
	ClassEscapes    = "terminal escape sequences"
	ClassControl    = "control characters"
	ClassLong       = "a text longer than 4096 characters"
	ClassBadUnicode = "invalid UTF-8"
)

// classOf is the one rule for what a person cannot see in a character: its
// class, or "" for a visible one. A joiner (ZWJ, ZWNJ) and a variation
// selector are hidden only in runs (a lone one is how emoji and some
// scripts are written); the callers count runs.
func classOf(r rune) string {
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return ClassTags
	case r == 0x200B || r == 0x2060 || r == 0xFEFF || r == 0x180E, isJoiner(r):
		return ClassZeroWidth
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return ClassBidi
	case isSelector(r):
		return ClassSelectors
	case r == 0x1B, r == 0x9B, r == 0x9D:
		return ClassEscapes
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r >= 0x7F && r < 0xA0:
		return ClassControl
	}
	return ""
}

func isJoiner(r rune) bool   { return r == 0x200C || r == 0x200D }
func isSelector(r rune) bool { return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF }

// inRun reports whether rs[i], a joiner or a selector, has a neighbour of
// its own kind.
func inRun(rs []rune, i int) bool {
	same := isJoiner
	if isSelector(rs[i]) {
		same = isSelector
	}
	return i > 0 && same(rs[i-1]) || i+1 < len(rs) && same(rs[i+1])
}

// hiddenAt is rs[i]'s class when a person cannot see it there.
func hiddenAt(rs []rune, i int) string {
	c := classOf(rs[i])
	if (isJoiner(rs[i]) || isSelector(rs[i])) && !inRun(rs, i) {
		return ""
	}
	return c
}

// Concealed lists the classes of concealed content in s, in a fixed order,
// each once.
func Concealed(s string) []string {
	found := map[string]bool{}
	rs := []rune(s)
	for i := range rs {
		if c := hiddenAt(rs, i); c != "" {
			found[c] = true
		}
	}
	found[ClassBadUnicode] = !utf8.ValidString(s)
	found[ClassLong] = len(rs) > MaxText
	var out []string
	for _, c := range []string{ClassTags, ClassZeroWidth, ClassBidi, ClassSelectors, ClassEscapes, ClassControl, ClassBadUnicode, ClassLong} {
		if found[c] {
			out = append(out, c)
		}
	}
	return out
}

// Visible renders s with concealed characters made visible, for the person
// who decides: each becomes <U+XXXX>, an escape <ESC>.
func Visible(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r == 0x1B:
			out = append(out, []rune("<ESC>")...)
		case classOf(r) != "":
			out = append(out, []rune(fmt.Sprintf("<U+%04X>", r))...)
		default:
			out = append(out, r)
		}
	}
	return string(out)
}

// Strip removes what a person cannot see from a tool result before the
// model reads it, by the same rule as Concealed (a lone joiner or selector
// stays; control characters other than escapes stay, since results carry
// them legitimately), and reports how many characters it removed.
func Strip(s string) (string, int) {
	rs := []rune(s)
	out := make([]rune, 0, len(rs))
	removed := 0
	for i := range rs {
		if c := hiddenAt(rs, i); c != "" && c != ClassControl {
			removed++
			continue
		}
		out = append(out, rs[i])
	}
	return string(out), removed
}
