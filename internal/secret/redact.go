package secret

import (
	"sort"
	"strings"

	"github.com/piagent/piagent/internal/lazyre"
)

const markerPrefix = "[REDACTED:"

// Marker is the text that replaces a secret found by rule.
func Marker(rule string) string { return markerPrefix + rule + "]" }

// A Finding is one redaction: the rule that fired and the byte offset of its
// marker in the redacted text. It never holds the secret.
type Finding struct {
	Rule   string
	Offset int
}

// prioAssignment ranks a credential-name assignment below every value rule
// except high-entropy, so a union names the more specific rule.
const prioAssignment = 50

// maxPasses bounds the redaction loop; each pass removes text, so it ends
// well before this.
const maxPasses = 16

// Redact replaces every secret in free text (a tool result) with
// Marker(rule): each value SecretValue would flag (so Bearer and Basic
// credentials and URL passwords too), and the value of every assignment
// whose key names a credential — KEY=value, KEY: value, "key": "value",
// --key=value, a header line such as "Authorization: Bearer …" (the scheme
// word is kept). Overlapping finds become one marker named by the most
// specific rule. The result is redacted again until nothing more is found,
// so Redact is idempotent and its output holds nothing SecretValue flags.
func Redact(text string) (string, []Finding) {
	var findings []Finding
	for pass := 0; pass < maxPasses; pass++ {
		spans := append(append(scanValues(text), scanAssignments(text)...), scanElements(text)...)
		if len(spans) == 0 {
			break
		}
		// A span that cuts into a marker from an earlier pass swallows the
		// whole marker, so no marker is ever left half overwritten.
		for i := range spans {
			for _, f := range findings {
				mEnd := f.Offset + len(Marker(f.Rule))
				if spans[i].start < mEnd && f.Offset < spans[i].end {
					spans[i].start = min(spans[i].start, f.Offset)
					spans[i].end = max(spans[i].end, mEnd)
				}
			}
		}
		merged := mergeSpans(spans)
		var b strings.Builder
		b.Grow(len(text))
		var next []Finding
		prev, delta, fi := 0, 0, 0
		for _, s := range merged {
			// Earlier findings before this span shift by the delta so far;
			// those inside it are subsumed by it.
			for ; fi < len(findings) && findings[fi].Offset < s.end; fi++ {
				if findings[fi].Offset < s.start {
					next = append(next, Finding{findings[fi].Rule, findings[fi].Offset + delta})
				}
			}
			b.WriteString(text[prev:s.start])
			m := Marker(s.rule)
			next = append(next, Finding{s.rule, s.start + delta})
			b.WriteString(m)
			delta += len(m) - (s.end - s.start)
			prev = s.end
		}
		for ; fi < len(findings); fi++ {
			next = append(next, Finding{findings[fi].Rule, findings[fi].Offset + delta})
		}
		b.WriteString(text[prev:])
		text = b.String()
		sort.SliceStable(next, func(i, j int) bool { return next[i].Offset < next[j].Offset })
		findings = next
	}
	return text, findings
}

// mergeSpans sorts spans and unites overlapping ones; a union takes the
// rule of its highest-priority member.
func mergeSpans(spans []span) []span {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var out []span
	for _, s := range spans {
		if s.end <= s.start {
			continue
		}
		if n := len(out); n > 0 && s.start < out[n-1].end {
			last := &out[n-1]
			if s.end > last.end {
				last.end = s.end
			}
			if s.prio > last.prio {
				last.prio, last.rule = s.prio, s.rule
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// codeValueRE is a member or call expression, which names where a secret
// comes from rather than holding one: process.env.TOKEN, cfg.Password.
var codeValueRE = lazyre.New(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[,;]?$`)

var identRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// notSecretValues are values that are types or literals, not secrets.
var notSecretValues = map[string]bool{
	"true": true, "false": true, "null": true, "nil": true, "none": true, "undefined": true,
	"string": true, "str": true, "number": true, "int": true, "bool": true, "boolean": true,
	"any": true, "[]byte": true, "bytes": true, "optional": true, "required": true,
}

// scanAssignments finds the values assigned to credential-named keys: at
// every ':' or '=', the key before it (optionally quoted, then optional
// spaces) and the value after it.
func scanAssignments(s string) []span {
	var out []span
	f := &finders{eol: nextIndex{chars: "\r\n"}, eq: nextIndex{chars: " \t\""}, query: nextIndex{chars: " \t&\""}, json: nextIndex{chars: " \t,}]"},
		quote: [3]nextIndex{{chars: `"`}, {chars: "'"}, {chars: "`"}}}
	for i := 0; i < len(s); i++ {
		sep := s[i]
		if sep != ':' && sep != '=' {
			continue
		}
		k := i
		for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		closeQ := ""
		if k > 0 && isQuote(s[k-1]) {
			closeQ = s[k-1 : k]
			k--
		}
		ke := k
		for k > 0 && isKeyChar(s[k-1]) && ke-k < 128 {
			k--
		}
		if k == ke || (k > 0 && isKeyChar(s[k-1])) {
			continue
		}
		openQ := ""
		if k > 0 && isQuote(s[k-1]) {
			openQ = s[k-1 : k]
		}
		if openQ != "" && closeQ != "" && openQ != closeQ || openQ == "" && closeQ != "" {
			continue
		}
		key := strings.TrimLeft(s[k:ke], "-.")
		if key == "" || fileName(key) || k > 0 && (s[k-1] == '/' || s[k-1] == '\\') {
			continue // grep and compiler output: src/auth.go:12: …, token.ts: …
		}
		p := i + 1
		if p < len(s) {
			switch n := s[p]; {
			case sep == ':' && (n == '/' || n == ':' || n == '='):
				continue // a URL scheme, a C++ scope, Go's :=
			case sep == '=' && (n == '=' || n == '>' || n == '~'):
				continue // a comparison or an arrow
			}
		}
		if i > 0 && sep == '=' && strings.IndexByte("!<>=:+*/", s[i-1]) >= 0 {
			continue // !=, <=, :=, +=, the second '=' of ==
		}
		rule, ok := CredentialName(key)
		if !ok {
			continue
		}
		for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
			p++
		}
		// a URL query's parameter (?token=…&…) ends at the next "&"; a
		// line's (signing.password=a&b in a .properties file) does not
		query := k > 0 && (s[k-1] == '?' || s[k-1] == '&')
		start, end := f.valueExtent(s, p, sep, openQ, closeQ, query)
		if start >= end {
			continue
		}
		if sch, rest := splitScheme(s[start:end]); sch != "" {
			start = end - len(rest)
		}
		v := strings.TrimRight(s[start:end], " \t")
		end = start + len(v)
		if start >= end || !secretAssigned(v, key) {
			continue
		}
		out = append(out, span{start, end, rule, prioAssignment})
		// A separator inside this value starts a value that ends where
		// this one does or sooner: skip it, keeping KEY=KEY=KEY=… linear.
		i = max(i, end-1)
	}
	return out
}

// nextIndex finds the next byte of chars at or after p. Queries come with
// non-decreasing p, so one answer serves every p up to it and a whole scan
// costs one pass over s.
type nextIndex struct {
	chars string
	pos   int // answer to the last query; 0 before the first
	valid bool
}

func (n *nextIndex) from(s string, p int) int {
	if n.valid && n.pos >= p {
		return n.pos
	}
	n.valid = true
	if i := strings.IndexAny(s[p:], n.chars); i >= 0 {
		n.pos = p + i
	} else {
		n.pos = len(s)
	}
	return n.pos
}

type finders struct {
	eol, eq, query, json nextIndex
	quote                [3]nextIndex
}

func (f *finders) quoteFinder(q string) *nextIndex {
	switch q {
	case `"`:
		return &f.quote[0]
	case "'":
		return &f.quote[1]
	}
	return &f.quote[2]
}

// sourceExts are file extensions that make a key a file name.
var sourceExts = map[string]bool{
	"go": true, "ts": true, "tsx": true, "js": true, "jsx": true, "mjs": true, "cjs": true,
	"py": true, "rb": true, "rs": true, "java": true, "kt": true, "c": true, "h": true,
	"cc": true, "cpp": true, "hpp": true, "cs": true, "php": true, "swift": true, "m": true,
	"sh": true, "bash": true, "zsh": true, "fish": true, "ps1": true, "json": true,
	"jsonc": true, "yaml": true, "yml": true, "toml": true, "ini": true, "cfg": true,
	"conf": true, "md": true, "txt": true, "html": true, "css": true, "scss": true,
	"vue": true, "svelte": true, "sql": true, "xml": true, "lock": true, "log": true,
	"proto": true, "graphql": true, "tf": true, "lua": true, "ex": true, "exs": true,
}

// fileName reports whether key ends in a source-file extension: auth.go.
func fileName(key string) bool {
	i := strings.LastIndexByte(key, '.')
	return i > 0 && sourceExts[strings.ToLower(key[i+1:])]
}

func isQuote(c byte) bool   { return c == '"' || c == '\'' || c == '`' }
func isKeyChar(c byte) bool { return isWordChar(c) || c == '.' || c == '-' }

// valueExtent returns where the value starting at p begins and ends.
func (f *finders) valueExtent(s string, p int, sep byte, openQ, closeQ string, query bool) (int, int) {
	eol := f.eol.from(s, p)
	if p >= eol {
		return p, p
	}
	if q := s[p]; isQuote(q) {
		for i := p + 1; i < eol; i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == q {
				return p + 1, i
			}
		}
		return p + 1, eol
	}
	switch {
	case openQ != "" && closeQ == "":
		// 'Authorization: Bearer …' inside a quoted string: the value ends
		// at the quote that closes it.
		return p, min(eol, f.quoteFinder(openQ).from(s, p))
	case sep == '=' && query:
		return p, min(eol, f.query.from(s, p))
	case sep == '=':
		return p, min(eol, f.eq.from(s, p))
	case openQ != "":
		// "key": value in JSON: a bare literal.
		return p, min(eol, f.json.from(s, p))
	default:
		return p, eol
	}
}

// secretAssigned reports whether v, assigned to key, may hold a secret.
func secretAssigned(v, key string) bool {
	bare := strings.TrimRight(v, ",;")
	if len(bare) > 256 {
		return true // too long to be a type, a literal or a variable name
	}
	switch {
	case bare == "", isMarker(bare), referencedOnly(bare), strings.Trim(bare, "*") == "":
		return false
	case strings.ContainsAny(bare[:1], "$[{(<"), strings.Contains(bare, "("):
		return false
	case notSecretValues[strings.ToLower(bare)], codeValueRE().MatchString(bare):
		return false
	case strings.EqualFold(bare, key):
		return false
	}
	if identRE().MatchString(bare) {
		if _, named := CredentialName(bare); named {
			return false // a variable named like a credential: password: password
		}
	}
	return true
}

// elementRE is an XML element with text alone inside, on one line:
// <password>…</password> in maven's settings.xml.
var elementRE = lazyre.New(`<([A-Za-z][\w.:-]{0,63})>([^<\r\n]{1,512})</([A-Za-z][\w.:-]{0,63})>`)

// scanElements finds the text of XML elements whose tag names a
// credential (<password>, <passphrase>, <privateKey>), as scanAssignments
// finds a KEY=value's.
func scanElements(s string) []span {
	if !strings.Contains(s, "</") {
		return nil
	}
	var out []span
	for _, m := range elementRE().FindAllStringSubmatchIndex(s, -1) {
		tag, end := s[m[2]:m[3]], s[m[6]:m[7]]
		if tag != end {
			continue
		}
		rule, ok := CredentialName(tag)
		if !ok {
			continue
		}
		v := strings.TrimSpace(s[m[4]:m[5]])
		if v == "" || !secretAssigned(v, tag) {
			continue
		}
		start := m[4] + strings.Index(s[m[4]:m[5]], v)
		out = append(out, span{start, start + len(v), rule, prioAssignment})
	}
	return out
}
