package catalogue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEveryConcealedCharacter names every character the rule hides, one
// at a time, inside ordinary text: dropping any one of them from its class
// (issue 41, K1: U+2060 and U+FEFF) fails here, in Concealed, Visible and
// Strip alike. Joiners and selectors count in runs, so they come in pairs.
func TestEveryConcealedCharacter(t *testing.T) {
	t.Parallel()
	type hidden struct {
		s     string
		class string
	}
	var cases []hidden
	one := func(class string, rs ...rune) {
		for _, r := range rs {
			cases = append(cases, hidden{string(r), class})
		}
	}
	one(ClassZeroWidth, 0x200B, 0x2060, 0xFEFF, 0x180E)
	cases = append(cases, hidden{"\u200c\u200c", ClassZeroWidth}, hidden{"\u200d\u200d", ClassZeroWidth})
	one(ClassBidi, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C)
	one(ClassTags, 0xE0000, 0xE0001, 0xE0041, 0xE007F)
	cases = append(cases, hidden{"\ufe00\ufe0f", ClassSelectors}, hidden{"\U000E0100\U000E01EF", ClassSelectors})
	one(ClassEscapes, 0x1B, 0x9B, 0x9D)
	one(ClassControl, 0x00, 0x01, 0x07, 0x08, 0x0B, 0x0C, 0x1F, 0x7F, 0x85, 0x9F)

	for _, c := range cases {
		in := "Reads the file" + c.s + " you name."
		if got := Concealed(in); !slices.Contains(got, c.class) {
			t.Errorf("Concealed(%+q) = %v, want %s", in, got, c.class)
		}
		want := ""
		for _, r := range c.s {
			if r == 0x1B {
				want += "<ESC>"
			} else {
				want += fmt.Sprintf("<U+%04X>", r)
			}
		}
		if v := Visible(in); !strings.Contains(v, want) {
			t.Errorf("Visible(%+q) = %q, want it to show %s", in, v, want)
		}
		if c.class == ClassControl {
			continue // results carry control characters legitimately: Strip keeps them
		}
		if out, n := Strip(in); out != "Reads the file you name." || n != len([]rune(c.s)) {
			t.Errorf("Strip(%+q) = %q, %d; want the text without it, %d removed", in, out, n, len([]rune(c.s)))
		}
	}
	// The controls: the neighbours of each range, and a lone joiner or
	// selector, are visible.
	for _, r := range []rune{0x200A, 0x2010, 0x205F, 0x2065, 0x206A, 0xFEFE, 0x180D, 0xE0080, 0xFE10, 0xA0, '\t', '\n', 0x200C, 0xFE0F} {
		if got := Concealed("a" + string(r) + "b"); got != nil {
			t.Errorf("Concealed(%U) = %v, want nothing", r, got)
		}
	}
}
