package secret

import (
	"encoding/base64"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestValueRules holds, for each rule, a positive and a near miss.
func TestValueRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value string
		rule  string // "" when nothing may fire
	}{
		{"pem private key", fakeRSA, RulePEMPrivateKey},
		{"pem private key, header only", "-----BEGIN OPENSSH PRIVATE KEY-----", RulePEMPrivateKey},
		{"pem pgp private block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF", RulePEMPrivateKey},
		{"near: pem public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----", ""},
		{"near: text about private keys", "keep your PRIVATE KEY safe", ""},

		{"github classic", fakeGHP, RuleGitHubToken},
		{"github app server", fakeGHS, RuleGitHubToken},
		{"near: github 35 chars", "ghp_" + strings.Repeat("Ab1", 12)[:35], ""},
		{"near: github unknown prefix", "ghx_" + strings.Repeat("Ab1", 12), ""},
		{"near: github prefix inside word", "xghp_" + fake(102, "abcdefghij", 36), ""},

		{"github fine-grained", fakeGitHubPAT, RuleGitHubPAT},
		{"near: github_pat short", "github_pat_" + fake(103, alnumChars, 20), ""},

		{"anthropic", fakeAnthropic, RuleAnthropicKey},
		{"near: anthropic short", "sk-ant-api03", ""},

		{"openai legacy", fakeOpenAI, RuleOpenAIKey},
		{"openai project", fakeOpenAIPrj, RuleOpenAIKey},
		{"near: sk- kebab name", "sk-this-is-a-package-name-not-a-key", ""},
		{"near: sk- inside word", "@acme/disk-" + fake(104, alnumChars, 24)[:0] + "usage", ""},

		{"aws access key id", fakeAKIA, RuleAWSAccessKeyID},
		{"aws sts key id", fakeASIA, RuleAWSAccessKeyID},
		{"near: aws 15 chars", "AKIA" + fake(105, upperNum, 15), ""},
		{"near: aws lower case", strings.ToLower(fakeAKIA), ""},

		{"slack bot", fakeSlackBot, RuleSlackToken},
		{"near: slack unknown letter", "xoxz-" + fake(106, digitChars, 12) + "-abc", ""},
		{"near: slack no digits", "xoxb-not-a-real-token-here", ""},

		{"slack webhook", fakeSlackHook, RuleSlackWebhook},
		{"near: slack webhook docs", "https://hooks.slack.com/services/", ""},

		{"gitlab", fakeGLPAT, RuleGitLabToken},
		{"near: gitlab short", "glpat-abc123", ""},

		{"google", fakeGoogle, RuleGoogleAPIKey},
		{"near: google short", "AIza" + fake(107, alnumChars, 20), ""},

		{"stripe live", fakeStripe, RuleStripeKey},
		{"stripe restricted", fakeStripeRK, RuleStripeKey},
		{"near: stripe publishable", "pk_live_" + fake(108, alnumChars, 16), ""},

		{"npm", fakeNPM, RuleNPMToken},
		{"near: npm config variable", "npm_config_userconfig", ""},
		{"near: npm 37 chars", "npm_" + strings.Repeat("Ab1", 13)[:37], ""},

		{"jwt", fakeJWTValue, RuleJWT},
		{"near: jwt header not json", "eyJhbGciOiJub3QganNvbg.eyJzdWIiOiIxIn0.abc", ""},
		{"near: jwt header without alg", b64url(`{"typ":"JWT"}`) + "." + b64url(`{"sub":"1"}`) + ".sig", ""},

		{"url password", "https://deploy:" + fakePassword + "@git.example.com/x.git", RuleURLCredentials},
		{"near: url user only", "https://deploy@git.example.com/x.git", ""},
		{"near: url password reference", "https://deploy:${GIT_PASSWORD}@git.example.com/x.git", ""},
		{"near: url port", "https://git.example.com:8443/x@y", ""},

		{"bearer", "Authorization: Bearer abcdef123456", RuleBearerToken},
		{"near: bearer english", "Bearer authentication is defined in RFC 6750", ""},
		{"near: bearer reference", "Bearer ${API_TOKEN}", ""},

		{"basic", "Basic " + b64("admin:correct-horse"), RuleBasicAuth},
		{"near: basic no colon", "Basic " + b64("adminpassword"), ""},
		{"near: basic english", "Basic usage is shown below", ""},

		{"high entropy base62", fakeRandom32, RuleHighEntropy},
		{"high entropy base64 of bytes", base64.StdEncoding.EncodeToString(fakeBytes(110, 30)), RuleHighEntropy},
		{"near: high entropy 31 chars", fakeRandom32[:31], ""},
		{"near: git sha", fake(111, hexChars, 40), ""},
		{"near: low entropy repeat", strings.Repeat("aB1x", 10), ""},
		{"near: uuid", fakeUUID(112), ""},
		{"near: base64 of text", b64("an entirely ordinary sentence, encoded for transport"), ""},
		{"near: camel identifier", "AbstractSingletonProxyFactoryBean2Impl", ""},
		{"near: sri hash", "sha384-" + base64.StdEncoding.EncodeToString(fakeBytes(113, 48)), ""},
		{"near: go.sum hash", "h1:" + base64.StdEncoding.EncodeToString(fakeBytes(114, 32)), ""},
	}
	for _, tt := range tests {
		got, ok := SecretValue(tt.value)
		if ok != (got != "") {
			t.Errorf("%s: SecretValue = %q, %v: ok must mean a rule", tt.name, got, ok)
		}
		if got != tt.rule {
			t.Errorf("%s: SecretValue rule = %q, want %q", tt.name, got, tt.rule)
		}
	}
}

// TestHighEntropyRates measures the generic rule on random keys and on
// generated identifiers and paths made of words.
func TestHighEntropyRates(t *testing.T) {
	t.Parallel()
	const n = 2000
	for _, size := range []int{32, 40, 64} {
		for _, alpha := range []struct{ name, chars string }{{"base62", alnumChars}, {"base64", b64Chars}, {"base64url", b64URL}} {
			hit := 0
			for i := range n {
				if rule, _ := SecretValue(fake(uint64(10000+i), alpha.chars, size)); rule == RuleHighEntropy {
					hit++
				}
			}
			t.Logf("random %s of %d chars: %d/%d detected", alpha.name, size, hit, n)
			min := n * 97 / 100
			if size >= 40 {
				min = n * 99 / 100
			}
			if hit < min {
				t.Errorf("random %s of %d chars: %d/%d detected, want at least %d", alpha.name, size, hit, n, min)
			}
		}
	}

	words := strings.Fields("user profile settings account manager factory config server client request response handler " +
		"service data model view controller api v2 http json xml node module package index test spec mock util helper main " +
		"app web mcp context seven playwright chrome devtools figma github docker image digest build release version alpha beta")
	r := rand.New(rand.NewPCG(1, 2))
	fp := 0
	const m = 20000
	for range m {
		var b strings.Builder
		sep := []string{"", "_", "-", "/"}[r.IntN(4)]
		for k := range 4 + r.IntN(8) {
			w := words[r.IntN(len(words))]
			switch r.IntN(3) {
			case 0:
				w = strings.ToUpper(w[:1]) + w[1:]
			case 1:
				w = strings.ToUpper(w)
			}
			if r.IntN(4) == 0 {
				w += string(rune('0' + r.IntN(10)))
			}
			if k > 0 {
				b.WriteString(sep)
			}
			b.WriteString(w)
		}
		if _, ok := SecretValue(b.String()); ok {
			fp++
			t.Logf("flagged: %s", b.String())
		}
	}
	t.Logf("generated identifiers and paths: %d/%d flagged", fp, m)
	if fp > 0 {
		t.Errorf("generated identifiers and paths: %d/%d flagged, want 0", fp, m)
	}
}

func TestSecretValueInside(t *testing.T) {
	t.Parallel()
	for _, v := range []string{
		"--token=" + fakeGHP,
		"prefix " + fakeNPM + " suffix",
		`{"key":"` + fakeGoogle + `"}`,
		"GITHUB_TOKEN=" + fakeGHP,
	} {
		if _, ok := SecretValue(v); !ok {
			t.Errorf("SecretValue(%d chars with a token inside) = false", len(v))
		}
	}
}

// FuzzScanValues: the look for needles first changes nothing.
func FuzzScanValues(f *testing.F) {
	for _, s := range []string{"", "sk-ant-" + strings.Repeat("a1B", 12), "Bearer abc.def", "BASIC dXNlcjpwYXNz", "https://u:p@h/x", "AKIAABCDEFGHIJKLMNOP", "x eyJhbGciOiJIUzI1NiJ9.e30.x", "plain words only", "ghp_" + strings.Repeat("x", 36)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := scanValues(s), scanAll(s)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v, without the look first %v", s, got, want)
		}
	})
}
