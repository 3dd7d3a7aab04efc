package catalogue

import "unicode/utf8"

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

// Concealed lists the classes of concealed content in s, in a fixed order,
// each once.
func Concealed(s string) []string {
	var tags, zw, bidi, sel, esc, ctl, bad bool
	run, joiners := 0, 0
	for i, r := range s {
		// A joiner (ZWJ, ZWNJ) alone is how emoji sequences and some
		// scripts are written; two or more in a row hide something.
		if r == 0x200C || r == 0x200D {
			joiners++
			if joiners >= 2 {
				zw = true
			}
		} else {
			joiners = 0
		}
		if r == utf8.RuneError && !validAt(s, i) {
			bad = true
		}
		switch {
		case r >= 0xE0000 && r <= 0xE007F:
			tags = true
		case r == 0x200B || r == 0x2060 || r == 0xFEFF || r == 0x180E:
			zw = true
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			bidi = true
		case r == 0x1B, r == 0x9B, r == 0x9D:
			esc = true
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r >= 0x7F && r < 0xA0:
			ctl = true
		}
		if r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF {
			run++
			if run >= 2 {
				sel = true
			}
		} else {
			run = 0
		}
	}
	var out []string
	for _, c := range []struct {
		on    bool
		class string
	}{{tags, ClassTags}, {zw, ClassZeroWidth}, {bidi, ClassBidi}, {sel, ClassSelectors}, {esc, ClassEscapes}, {ctl, ClassControl}, {bad, ClassBadUnicode}, {utf8.RuneCountInString(s) > MaxText, ClassLong}} {
		if c.on {
			out = append(out, c.class)
		}
	}
	return out
}

func validAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return !(r == utf8.RuneError && size == 1)
}

// Visible renders s with concealed characters made visible, for the person
// who decides: each becomes <U+XXXX>, an escape <ESC>.
func Visible(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		hidden := r >= 0xE0000 && r <= 0xE007F || r >= 0xE0100 && r <= 0xE01EF ||
			r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF || r == 0x180E ||
			r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C ||
			r >= 0xFE00 && r <= 0xFE0F ||
			r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7F && r < 0xA0
		if !hidden {
			out = append(out, r)
			continue
		}
		if r == 0x1B {
			out = append(out, []rune("<ESC>")...)
			continue
		}
		out = append(out, []rune(hex(r))...)
	}
	return string(out)
}

func hex(r rune) string {
	const digits = "0123456789ABCDEF"
	b := []byte("<U+")
	n := 4
	if r > 0xFFFF {
		n = 5
	}
	for i := n - 1; i >= 0; i-- {
		b = append(b, digits[(r>>(4*uint(i)))&0xF])
	}
	return string(append(b, '>'))
}

// Strip removes concealed characters from a tool result before the model
// sees it: tag characters, zero-width and bidi controls, variation-selector
// runs (a lone selector after an emoji stays) and terminal escapes (the
// ESC and the sequence's introducer). It reports how many it removed.
func Strip(s string) (string, int) {
	out := make([]rune, 0, len(s))
	removed := 0
	rs := []rune(s)
	for i, r := range rs {
		isSel := r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
		inRun := isSel && (i > 0 && isSelector(rs[i-1]) || i+1 < len(rs) && isSelector(rs[i+1]))
		switch {
		case r >= 0xE0000 && r <= 0xE007F,
			r == 0x200B || r == 0x2060 || r == 0xFEFF || r == 0x180E,
			r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C,
			r == 0x1B, r == 0x9B, r == 0x9D,
			inRun:
			removed++
			continue
		}
		out = append(out, r)
	}
	return string(out), removed
}

func isSelector(r rune) bool { return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF }
