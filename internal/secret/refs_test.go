package secret

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsReference(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"${GITHUB_TOKEN}":    true,
		"$env:GITHUB_TOKEN":  true,
		"{env:GITHUB_TOKEN}": true,
		"${a1_B2}":           true,
		"${}":                false,
		"${GITHUB-TOKEN}":    false,
		" ${X}":              false,
		"${X} ":              false,
		"${X}${Y}":           false,
		"Bearer ${X}":        false,
		"$GITHUB_TOKEN":      false,
		"$env:":              false,
		"{env:X":             false,
		"":                   false,
	}
	for in, want := range tests {
		if got := IsReference(in); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"${A}":                                   {"A"},
		"Bearer ${TOKEN}":                        {"TOKEN"},
		"${A}:$env:B/{env:C}?d=${A}":             {"A", "B", "C"},
		"https://${HOST}/x?k=$env:KEY&j={env:J}": {"HOST", "KEY", "J"},
		"$env:A-B":                               {"A"},
		"no refs here $X ${} {env:}":             nil,
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, References(in)); diff != "" {
			t.Errorf("References(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestReferencedOnly(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"${TOKEN}":             true,
		"Bearer ${TOKEN}":      true,
		"bearer\t${TOKEN}":     true,
		"Basic ${CREDS}":       true,
		"${USER}:${PASS}":      true,
		"Token $env:GH":        true,
		"Bearer abc ${TOKEN}":  false,
		"prefix-${TOKEN}":      false,
		"Bearer":               false,
		"${TOKEN}abc":          false,
		"Bearer Bearer ${TOK}": false,
		"":                     false,
	}
	for in, want := range tests {
		if got := referencedOnly(in); got != want {
			t.Errorf("referencedOnly(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzReferences: the hand-written reader finds what refRE finds.
func FuzzReferences(f *testing.F) {
	for _, s := range []string{"${A}", "$env:B_1", "{env:C}", "x${A}y$env:B{env:C}${A}", "${", "$env:", "{env:x", "${a-b}", "$${A}}", "{env:{env:A}}", "Bearer ${TOKEN}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		for _, m := range refRE().FindAllStringSubmatch(s, -1) {
			if n := m[1] + m[2] + m[3]; !slices.Contains(want, n) {
				want = append(want, n)
			}
		}
		if got := References(s); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, refRE %q", s, got, want)
		}
		if got, want := IsReference(s), wholeRefRE().MatchString(s); got != want {
			t.Fatalf("%q: IsReference %v, wholeRefRE %v", s, got, want)
		}
	})
}
