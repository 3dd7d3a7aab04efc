package secret

import (
	"errors"
	"strings"
	"testing"
)

func seedCorpus(f *testing.F) {
	for _, c := range corpus() {
		f.Add(c.value)
	}
	f.Add("GITHUB_TOKEN=" + fakeGHP + "\nAuthorization: Bearer " + fakeRandom32)
	f.Add(`{"password": "x", "token": "` + fakeNPM + `"}`)
	f.Add("https://u:" + fakePassword + "@h/ and Basic " + b64("a:b"))
	f.Add("TOKEN=[REDACTED:token]")
	f.Add("")
}

func FuzzSecretValue(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, s string) {
		rule, ok := SecretValue(s)
		if ok != (rule != "") {
			t.Fatalf("SecretValue = %q, %v", rule, ok)
		}
		if ok && describe[rule] == "" {
			t.Fatalf("rule %q has no description", rule)
		}
		// A reference is never a secret, and a secret survives being
		// surrounded by spaces.
		if ok {
			if _, again := SecretValue(" " + s + " "); !again {
				t.Fatalf("secret lost when padded with spaces")
			}
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"Authorization: Bearer ${TOKEN}", "X: y", "no colon", ": v", "A : b", "A:\r\nB: c",
		"X-Api-Key:\t" + fakeRandom32 + "\t", "!#$%&'*+-.^_`|~: v", "Nämé: v", "A: b\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, value, err := ParseHeader(s)
		if err != nil {
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("error %v does not wrap ErrHeader", err)
			}
			if len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("error quotes the input")
			}
			return
		}
		if name == "" || strings.ContainsAny(name+value, "\r\n") {
			t.Fatalf("ParseHeader(%q) = %q, %q", s, name, value)
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				t.Fatalf("name %q has a non-token byte", name)
			}
		}
		if value != strings.Trim(value, " \t") {
			t.Fatalf("value %q not trimmed", value)
		}
		// Round trip.
		n2, v2, err := ParseHeader(name + ": " + value)
		if err != nil || n2 != name || v2 != value {
			t.Fatalf("round trip of %q: %q, %q, %v", s, n2, v2, err)
		}
		// The checks never panic and refuse only with a *Refusal.
		if err := CheckHeader(name, value); err != nil {
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("CheckHeader error %v is not a *Refusal", err)
			}
		}
	})
}

func FuzzRedact(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, s string) {
		out, findings := Redact(s)
		if rule, ok := SecretValue(out); ok {
			t.Fatalf("Redact output still holds a %s", rule)
		}
		again, more := Redact(out)
		if again != out || len(more) != 0 {
			t.Fatalf("Redact not idempotent:\n%q\n%q", out, again)
		}
		prev := -1
		for _, fd := range findings {
			if fd.Offset < prev || !strings.HasPrefix(out[fd.Offset:], Marker(fd.Rule)) {
				t.Fatalf("finding %+v does not point at its marker in %q", fd, out)
			}
			prev = fd.Offset
		}
		// Checks and masking never panic on arbitrary text.
		_ = CheckEnv("X", s)
		_ = CheckURL(s)
		_ = Mask(map[string]any{"args": []any{s}, "env": map[string]any{"A": s}})
	})
}
