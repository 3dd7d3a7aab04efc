package secret

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/piagent/piagent/internal/lazyre"
)

// Value rule names, as SecretValue and Redact report them.
const (
	RulePEMPrivateKey  = "pem-private-key"
	RuleGitHubToken    = "github-token"
	RuleGitHubPAT      = "github-pat"
	RuleAnthropicKey   = "anthropic-key"
	RuleOpenAIKey      = "openai-key"
	RuleAWSAccessKeyID = "aws-access-key-id"
	RuleSlackToken     = "slack-token"
	RuleSlackWebhook   = "slack-webhook"
	RuleGitLabToken    = "gitlab-token"
	RuleGoogleAPIKey   = "google-api-key"
	RuleStripeKey      = "stripe-key"
	RuleNPMToken       = "npm-token"
	RuleJWT            = "jwt"
	RuleURLCredentials = "url-credentials"
	RuleBearerToken    = "bearer-token"
	RuleBasicAuth      = "basic-credentials"
	RuleHighEntropy    = "high-entropy"
)

// describe is the phrase a refusal uses for a value rule.
var describe = map[string]string{
	RulePEMPrivateKey:  "a PEM private key",
	RuleGitHubToken:    "a GitHub token",
	RuleGitHubPAT:      "a GitHub fine-grained personal access token",
	RuleAnthropicKey:   "an Anthropic API key",
	RuleOpenAIKey:      "an OpenAI API key",
	RuleAWSAccessKeyID: "an AWS access key ID",
	RuleSlackToken:     "a Slack token",
	RuleSlackWebhook:   "a Slack webhook URL",
	RuleGitLabToken:    "a GitLab access token",
	RuleGoogleAPIKey:   "a Google API key",
	RuleStripeKey:      "a Stripe secret key",
	RuleNPMToken:       "an npm access token",
	RuleJWT:            "a JSON Web Token",
	RuleURLCredentials: "a URL with a password in it",
	RuleBearerToken:    "a bearer token",
	RuleBasicAuth:      "basic authentication credentials",
	RuleHighEntropy:    "a random secret (a long high-entropy string)",
}

// A span is one detected secret in a text: text[start:end], found by rule,
// with prio deciding which rule names a union of overlapping spans.
type span struct {
	start, end int
	rule       string
	prio       int
}

// valueRule is one pattern rule. Each occurrence of a needle is a candidate
// start (for a URL, the scheme before "://"); the pattern is matched there,
// anchored, so the text is scanned once per needle rather than once per
// pattern. A rule with word set needs a non-word character (or nothing)
// before the start, as \b would.
type valueRule struct {
	name    string
	prio    int
	needles []string
	fold    bool // needles are lower case and matched case-insensitively
	word    bool
	re      func() *regexp.Regexp // compiled on first use
	ok      func(m string) bool   // checked on group 1 when there is one
	inner   bool                  // the secret is group 1, not the whole match
}

func anchored(p string) func() *regexp.Regexp { return lazyre.New(`^(?:` + p + `)`) }

var valueRules = []valueRule{
	{
		name: RulePEMPrivateKey, prio: 100, needles: []string{"-----BEGIN"},
		re: anchored(`(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*)`),
	},
	{
		name: RuleGitHubPAT, prio: 95, needles: []string{"github_pat_"}, word: true,
		re: anchored(`github_pat_[A-Za-z0-9_]{50,}`),
	},
	{
		name: RuleGitHubToken, prio: 90, needles: []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_"}, word: true,
		re: anchored(`gh[pousr]_[A-Za-z0-9]{36,}`),
	},
	{
		name: RuleAnthropicKey, prio: 95, needles: []string{"sk-ant-"}, word: true,
		re: anchored(`sk-ant-[A-Za-z0-9_-]{32,}`),
	},
	{
		name: RuleOpenAIKey, prio: 90, needles: []string{"sk-"}, word: true,
		re: anchored(`sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`),
		ok: mixedClasses,
	},
	{
		name: RuleAWSAccessKeyID, prio: 90, needles: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, word: true,
		re: anchored(`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`),
	},
	{
		name: RuleSlackToken, prio: 90, needles: []string{"xox"}, word: true,
		re: anchored(`xox[abposr]-[A-Za-z0-9-]{10,}`),
		ok: hasDigit,
	},
	{
		name: RuleSlackWebhook, prio: 95, needles: []string{"https://hooks.slack.com/"},
		re: anchored(`https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]{16,}`),
	},
	{
		name: RuleGitLabToken, prio: 90, needles: []string{"glpat-"}, word: true,
		re: anchored(`glpat-[A-Za-z0-9_-]{20,}`),
	},
	{
		name: RuleGoogleAPIKey, prio: 90, needles: []string{"AIza"}, word: true,
		re: anchored(`AIza[0-9A-Za-z_-]{35}`),
	},
	{
		name: RuleStripeKey, prio: 90, needles: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, word: true,
		re: anchored(`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`),
	},
	{
		name: RuleNPMToken, prio: 90, needles: []string{"npm_"}, word: true,
		re: anchored(`npm_[A-Za-z0-9]{36}\b`),
	},
	{
		name: RuleJWT, prio: 85, needles: []string{"eyJ"}, word: true,
		re: anchored(`ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*`),
		ok: jwtHeader,
	},
	{
		name: RuleURLCredentials, prio: 70, needles: []string{"://"},
		re: anchored(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"<>]*:([^/\s@'"<>]+)@`),
		ok: literalPassword, inner: true,
	},
	{
		name: RuleBearerToken, prio: 60, needles: []string{"bearer"}, fold: true, word: true,
		re:    anchored(`(?i)bearer[ \t]+([A-Za-z0-9._~+/=-]{8,})`),
		ok:    func(m string) bool { return hasDigit(m) && hasLetter(m) },
		inner: true,
	},
	{
		name: RuleBasicAuth, prio: 60, needles: []string{"basic"}, fold: true, word: true,
		re: anchored(`(?i)basic[ \t]+([A-Za-z0-9+/]{4,}={0,2})`),
		ok: basicCredentials, inner: true,
	},
}

// scanValues returns every secret value in s, found by the pattern rules and
// the high-entropy rule, sorted by start.
// needleStarts lists, by first byte, every rule's needles (both cases of
// that byte for a case-folded rule): the one pass that rules out most
// strings before any rule looks at them.
var needleStarts = sync.OnceValue(func() *[256][]needleAt {
	var t [256][]needleAt
	for i := range valueRules {
		r := &valueRules[i]
		for _, n := range r.needles {
			if r.fold {
				t[asciiLower(n[:1])[0]] = append(t[asciiLower(n[:1])[0]], needleAt{n, true})
				t[strings.ToUpper(n[:1])[0]] = append(t[strings.ToUpper(n[:1])[0]], needleAt{n, true})
				continue
			}
			t[n[0]] = append(t[n[0]], needleAt{n, false})
		}
	}
	return &t
})

type needleAt struct {
	text string
	fold bool
}

// anyNeedle reports whether some rule's needle occurs in s.
func anyNeedle(s string) bool {
	t := needleStarts()
	for i := 0; i < len(s); i++ {
		for _, n := range t[s[i]] {
			if len(s)-i < len(n.text) {
				continue
			}
			if n.fold && strings.EqualFold(s[i:i+len(n.text)], n.text) || !n.fold && s[i:i+len(n.text)] == n.text {
				return true
			}
		}
	}
	return false
}

func scanValues(s string) []span {
	if !anyNeedle(s) {
		return scanEntropy(s) // sorted by start already
	}
	return scanAll(s)
}

// scanAll is scanValues without the look for needles first.
func scanAll(s string) []span {
	var out []span
	var lower string
	for i := range valueRules {
		r := &valueRules[i]
		hay := s
		if r.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		for _, needle := range r.needles {
			for from := 0; ; {
				k := strings.Index(hay[from:], needle)
				if k < 0 {
					break
				}
				at := from + k
				from = at + 1
				start := at
				if needle == "://" {
					for start > 0 && isSchemeChar(s[start-1]) {
						start--
					}
					for start < at && !isUpper(s[start]) && !isLower(s[start]) {
						start++
					}
					if start == at {
						continue
					}
				}
				if r.word && start > 0 && isWordChar(s[start-1]) {
					continue
				}
				loc := r.re().FindStringSubmatchIndex(s[start:])
				if loc == nil {
					continue
				}
				ms, me := start+loc[0], start+loc[1]
				// Needles inside this match start suffixes of it; skipping
				// them keeps a run like sk-sk-sk-… linear.
				from = max(from, me)
				gs, ge := ms, me
				if len(loc) >= 4 && loc[2] >= 0 {
					gs, ge = start+loc[2], start+loc[3]
				}
				if r.ok != nil && !r.ok(s[gs:ge]) {
					continue
				}
				if r.inner {
					ms, me = gs, ge
				}
				out = append(out, span{ms, me, r.name, r.prio})
			}
		}
	}
	out = append(out, scanEntropy(s)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

func isSchemeChar(c byte) bool { return isAlnum(c) || c == '+' || c == '.' || c == '-' }

// asciiLower lower-cases ASCII letters only, so byte offsets are kept.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if isUpper(c) {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// SecretValue reports whether v contains a value that looks like a secret,
// and the most specific rule that says so. It searches inside v, so
// "--api-key=sk-…" and "Bearer …" are found as well as a bare token.
func SecretValue(v string) (rule string, ok bool) {
	best := span{prio: -1}
	for _, s := range scanValues(v) {
		if s.prio > best.prio {
			best = s
		}
	}
	return best.rule, best.prio >= 0
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isUpper(s[i]) || isLower(s[i]) {
			return true
		}
	}
	return false
}

// mixedClasses: upper case, lower case and digits all present.
func mixedClasses(s string) bool {
	var u, l, d bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isUpper(c):
			u = true
		case isLower(c):
			l = true
		case isDigit(c):
			d = true
		}
	}
	return u && l && d
}

// jwtHeader: the first part decodes to a JSON object with a string "alg".
func jwtHeader(m string) bool {
	head, _, _ := strings.Cut(m, ".")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	alg, ok := h["alg"].(string)
	return ok && alg != ""
}

// isMarker reports whether s is exactly a redaction marker.
func isMarker(s string) bool {
	return strings.HasPrefix(s, markerPrefix) && strings.HasSuffix(s, "]") &&
		!strings.ContainsAny(s[len(markerPrefix):len(s)-1], "[]")
}

// literalPassword: a URL password that is not a reference, a mask or a
// redaction marker.
func literalPassword(p string) bool {
	// A marker holds a colon itself, so "[REDACTED:rule]@" reads as
	// user "[REDACTED" with password "rule]": that is no password either.
	if isMarker(p) || isMarker(markerPrefix+p) || referencedOnly(p) || strings.Trim(p, "*") == "" {
		return false
	}
	return true
}

// basicCredentials: base64 of printable "user:password".
func basicCredentials(m string) bool {
	raw, err := base64.StdEncoding.DecodeString(m)
	if err != nil {
		return false
	}
	return len(raw) >= 3 && strings.IndexByte(string(raw), ':') >= 0 && printable(raw) == len(raw)
}

// printable counts the bytes of b that are printable ASCII or whitespace.
func printable(b []byte) int {
	n := 0
	for _, c := range b {
		if (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r' {
			n++
		}
	}
	return n
}

// High-entropy rule parameters.
const (
	entropyMinLen    = 32  // characters in the run, '=' padding excluded
	entropyMinBits   = 4.0 // Shannon entropy, bits per character
	entropyMaxAvgSeg = 3.8 // mean length of the run's word segments
)

func isRunChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-'
}

// scanEntropy finds maximal runs of [A-Za-z0-9+/=_-] that look random.
func scanEntropy(s string) []span {
	var out []span
	var public [][]int
	if strings.Contains(s, "-----BEGIN ") {
		for _, loc := range pemBlockRE().FindAllStringSubmatchIndex(s, -1) {
			if !strings.Contains(s[loc[2]:loc[3]], "PRIVATE") {
				public = append(public, loc)
			}
		}
	}
	for i := 0; i < len(s); {
		if !isRunChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isRunChar(s[j]) {
			// '=' belongs to a run only as trailing padding; KEY=value
			// is two runs.
			if s[j] == '=' && j+1 < len(s) && isRunChar(s[j+1]) && s[j+1] != '=' {
				break
			}
			j++
		}
		start, end := i, j
		if end-start >= entropyMinLen {
			out = appendEntropy(out, s, start, end, public)
		}
		i = max(j, i+1)
	}
	return out
}

// appendEntropy adds s[start:end] when it looks random. A run that reads as
// a path (most of its '/'-separated parts are words, as in
// com/file/AbC123/Design-System) is judged part by part instead.
func appendEntropy(out []span, s string, start, end int, public [][]int) []span {
	run := s[start:end]
	if !pathLike(run) {
		if highEntropy(run) && !publicContext(s, start, public) {
			out = append(out, span{start, end, RuleHighEntropy, 10})
		}
		return out
	}
	for off := 0; off < len(run); {
		n := strings.IndexByte(run[off:], '/')
		if n < 0 {
			n = len(run) - off
		}
		if highEntropy(run[off:off+n]) && !publicContext(s, start+off, public) {
			out = append(out, span{start + off, start + off + n, RuleHighEntropy, 10})
		}
		off += n + 1
	}
	return out
}

var wordPartRE = lazyre.New(`^[A-Za-z]?[a-z]{3,}(?:[-_.]?[A-Za-z]?[a-z]+)*$|^[A-Z]{3,}$`)

// pathLike: at least two '/'-separated parts, half or more of them words.
func pathLike(run string) bool {
	if strings.IndexByte(run, '/') < 0 {
		return false
	}
	parts, words := 0, 0
	for _, p := range strings.Split(run, "/") {
		if p == "" {
			continue
		}
		parts++
		if wordPartRE().MatchString(p) {
			words++
		}
	}
	return parts >= 2 && words*2 >= parts
}

// pemBlockRE is any PEM block; group 1 is its type.
var pemBlockRE = lazyre.New(`(?s)-----BEGIN ([A-Z0-9 ]+)-----.*?-----END [A-Z0-9 ]+-----`)

// hashLabels precede a hash written as text: go.sum's h1:, sha256:… digests.
var hashLabels = []string{"h1:", "sha1:", "sha256:", "sha384:", "sha512:", "sha256=", "sha512="}

// publicContext reports whether the run at start is known public material
// by what surrounds it: a hash after its label, an SSH public key after its
// type word, or a line of a PEM block that is not a private key.
func publicContext(s string, start int, public [][]int) bool {
	before := s[max(0, start-24):start]
	for _, l := range hashLabels {
		if strings.HasSuffix(before, l) {
			return true
		}
	}
	if strings.HasPrefix(s[start:], "AAAA") && strings.HasSuffix(before, " ") {
		word := strings.TrimSuffix(before, " ")
		if k := strings.LastIndexAny(word, " \t\n\"'"); k >= 0 {
			word = word[k+1:]
		}
		if strings.HasPrefix(word, "ssh-") || strings.HasPrefix(word, "ecdsa-") || strings.HasPrefix(word, "sk-ssh-") || strings.HasPrefix(word, "sk-ecdsa-") {
			return true
		}
	}
	for _, b := range public {
		if start >= b[0] && start < b[1] {
			return true
		}
	}
	return false
}

// publicPrefixes start runs that are public by their format: subresource
// integrity hashes and Stripe publishable keys.
var publicPrefixes = []string{"sha1-", "sha256-", "sha384-", "sha512-", "pk_live_", "pk_test_"}

// highEntropy is the generic rule: at least entropyMinLen characters, upper
// case, lower case and digits all present, Shannon entropy of at least
// entropyMinBits, short word segments (random text changes character class
// every one or two characters; identifiers and paths do not), at most an
// eighth punctuation, and not the base64 of printable text. Runs with a
// public prefix pass. The package comment has the measured rates.
func highEntropy(run string) bool {
	core := strings.TrimRight(run, "=")
	if len(core) < entropyMinLen {
		return false
	}
	for _, p := range publicPrefixes {
		if strings.HasPrefix(core, p) {
			return false
		}
	}
	if !mixedClasses(core) {
		return false
	}
	if shannon(core) < entropyMinBits {
		return false
	}
	if avgSegment(core) > entropyMaxAvgSeg {
		return false
	}
	punct := 0
	for i := 0; i < len(core); i++ {
		if !isAlnum(core[i]) {
			punct++
		}
	}
	if punct*8 > len(core) {
		return false // words joined by separators: Api-Context-Api4-mcp-User
	}
	return !base64Text(run)
}

func shannon(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// avgSegment splits s into word segments — a capitalised or lower-case word,
// an upper-case run, each with the digits that follow it, or a lone digit
// run — ignoring punctuation, and returns their mean length.
func avgSegment(s string) float64 {
	segs, chars := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		j := i + 1
		switch {
		case isDigit(c):
		case isLower(c):
			for j < len(s) && isLower(s[j]) {
				j++
			}
		case isUpper(c):
			if j < len(s) && isLower(s[j]) {
				for j < len(s) && isLower(s[j]) {
					j++
				}
			} else {
				for j < len(s) && isUpper(s[j]) && !(j+1 < len(s) && isLower(s[j+1])) {
					j++
				}
			}
		default:
			i = j
			continue
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		segs++
		chars += j - i
		i = j
	}
	if segs == 0 {
		return 0
	}
	return float64(chars) / float64(segs)
}

// base64Text reports whether run decodes, in either base64 alphabet, to
// mostly printable text.
func base64Text(run string) bool {
	core := strings.TrimRight(run, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		raw, err := enc.DecodeString(core)
		if err != nil || len(raw) == 0 {
			continue
		}
		if printable(raw)*10 >= len(raw)*9 {
			return true
		}
	}
	return false
}
