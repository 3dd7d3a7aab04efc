package secret

import (
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/lazyre"
)

// refRE matches the adapter's three interpolation syntaxes. \w is ASCII in
// RE2, as it is in the adapter's JavaScript regular expressions.
var (
	refRE      = lazyre.New(`\$\{(\w+)\}|\$env:(\w+)|\{env:(\w+)\}`)
	wholeRefRE = lazyre.New(`^(?:\$\{\w+\}|\$env:\w+|\{env:\w+\})$`)
)

// IsReference reports whether the whole value is one variable reference:
// ${VAR}, $env:VAR or {env:VAR}, where VAR is word characters.
func IsReference(v string) bool {
	name, end := refAt(v, 0)
	return name != "" && end == len(v)
}

// refAt reads a reference starting at s[i], as refRE would match there:
// the variable's name and where the reference ends, or "" when none starts
// at i.
func refAt(s string, i int) (name string, end int) {
	word := func(j int) int {
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j
	}
	switch {
	case strings.HasPrefix(s[i:], "${"):
		if j := word(i + 2); j > i+2 && j < len(s) && s[j] == '}' {
			return s[i+2 : j], j + 1
		}
	case strings.HasPrefix(s[i:], "$env:"):
		if j := word(i + 5); j > i+5 {
			return s[i+5 : j], j
		}
	case strings.HasPrefix(s[i:], "{env:"):
		if j := word(i + 5); j > i+5 && j < len(s) && s[j] == '}' {
			return s[i+5 : j], j + 1
		}
	}
	return "", i
}

// MayReference reports whether s could hold a reference: every syntax has
// a $ or a {. Two byte scans, cheaper than a set for the short strings of a
// server's definition.
func MayReference(s string) bool {
	return strings.IndexByte(s, '$') >= 0 || strings.IndexByte(s, '{') >= 0
}

// References returns every variable named by a reference inside s, in order
// of first appearance, each once.
func References(s string) []string {
	if !MayReference(s) {
		return nil
	}
	var out []string
	for i := 0; i < len(s); {
		name, end := refAt(s, i)
		if name == "" {
			i++
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
		i = end
	}
	return out
}

// schemeWords are authentication scheme words that may precede a reference
// ("Bearer ${TOKEN}"), matched case-insensitively.
var schemeWords = []string{"Bearer", "Basic", "Token", "Bot", "Digest", "ApiKey", "Api-Key", "Key", "DPoP", "SSWS"}

// referencedOnly reports whether v holds at least one reference and, apart
// from its references, only separators, optionally after one leading
// authentication scheme word: "${TOKEN}", "Bearer ${TOKEN}",
// "${USER}:${PASS}". Such a value names variables and carries no literal.
func referencedOnly(v string) bool {
	locs := refRE().FindAllStringIndex(v, -1)
	if len(locs) == 0 {
		return false
	}
	head := v[:locs[0][0]]
	if scheme, _ := splitScheme(head); scheme != "" {
		head = head[len(scheme):]
	}
	rest := []string{head}
	for i, l := range locs {
		end := len(v)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		rest = append(rest, v[l[1]:end])
	}
	for _, r := range rest {
		for i := 0; i < len(r); i++ {
			if !strings.ContainsRune(" \t:;,/@._-=+", rune(r[i])) {
				return false
			}
		}
	}
	return true
}

// splitScheme splits a leading authentication scheme word followed by
// whitespace from v. It returns the scheme as written and the rest after the
// whitespace, or "" and v.
func splitScheme(v string) (scheme, rest string) {
	for _, w := range schemeWords {
		if len(v) > len(w) && strings.EqualFold(v[:len(w)], w) && (v[len(w)] == ' ' || v[len(w)] == '\t') {
			return v[:len(w)], strings.TrimLeft(v[len(w):], " \t")
		}
	}
	return "", v
}

// varName turns a field name into a variable name the adapter can
// interpolate: a name already made of word characters is kept as written;
// otherwise it is upper-cased and every other character becomes '_'.
func varName(name string, upper bool) string {
	valid := name != ""
	for i := 0; i < len(name); i++ {
		if !isWordChar(name[i]) {
			valid = false
		}
	}
	if valid && !upper {
		return name
	}
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if !isWordChar(c) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "VALUE"
	}
	return string(b)
}
