package secret

import (
	"strings"

	"github.com/piagent/piagent/internal/lazyre"
)

// Masked replaces a value Mask hides.
const Masked = "****"

// urlPasswordRE finds the password of a URL's userinfo (group 2).
var urlPasswordRE = lazyre.New(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"<>]*:)([^/\s@'"<>]+)@`)

// Mask returns a deep copy of a server entry fit for display.
//
// Secret-bearing fields — every value of env, headers and
// requestHeadersCommand.env, and bearerToken and oauth.clientSecret — are
// shown as "****" unless the value is a reference or is made only of
// references, separators and a scheme word ("Bearer ${TOKEN}"), which are
// variable names and are kept as written. A `!command` value there is kept,
// since the approver must see what will run, unless the command itself holds
// a secret-looking value. An empty string stays empty.
//
// Every other string leaf (command, args, url, cwd, …) is kept, except that
// the password of URL userinfo becomes "****" (https://user:****@host), a
// leaf under a key that names a credential (other than the top-level "auth"
// mode) is masked like a secret-bearing field, and a leaf SecretValue flags
// becomes "****".
func Mask(entry map[string]any) map[string]any {
	if entry == nil {
		return nil
	}
	out := make(map[string]any, len(entry))
	for k, v := range entry {
		switch k {
		case "env", "headers":
			out[k] = maskRecord(v)
		case "bearerToken":
			out[k] = maskField(v)
		case "auth":
			out[k] = maskLeaf(v)
		case "oauth", "requestHeadersCommand":
			m, ok := v.(map[string]any)
			if !ok {
				out[k] = maskLeaf(v)
				continue
			}
			c := make(map[string]any, len(m))
			for kk, vv := range m {
				switch {
				case k == "oauth" && kk == "clientSecret":
					c[kk] = maskField(vv)
				case k == "requestHeadersCommand" && kk == "env":
					c[kk] = maskRecord(vv)
				default:
					c[kk] = maskKeyed(kk, vv)
				}
			}
			out[k] = c
		default:
			out[k] = maskKeyed(k, v)
		}
	}
	return out
}

// maskRecord masks every value of a string record.
func maskRecord(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return maskField(v)
	}
	c := make(map[string]any, len(m))
	for k, vv := range m {
		c[k] = maskField(vv)
	}
	return c
}

// maskField masks one value of a secret-bearing field.
func maskField(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		switch {
		case x == "", IsReference(x), referencedOnly(x):
			return x
		case len(x) > 1 && x[0] == '!' && x[1] != '!':
			if _, secret := SecretValue(x[1:]); !secret {
				return x
			}
		}
		return Masked
	default:
		return Masked
	}
}

// maskKeyed masks a generic value found under key k.
func maskKeyed(k string, v any) any {
	if _, cred := CredentialName(k); cred {
		if _, isString := v.(string); isString {
			return maskField(v)
		}
	}
	return maskLeaf(v)
}

// maskLeaf deep-copies a generic value, masking string leaves that hold a
// secret-looking value or a URL password.
func maskLeaf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, vv := range x {
			c[k] = maskKeyed(k, vv)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, vv := range x {
			c[i] = maskLeaf(vv)
		}
		return c
	case string:
		return maskString(x)
	default:
		return v
	}
}

func maskString(s string) string {
	if mayHoldURLPassword(s) {
		s = maskURLPasswords(s)
	}
	if _, secret := SecretValue(s); secret {
		return Masked
	}
	return s
}

// mayHoldURLPassword is the cheap look before urlPasswordRE: a URL with a
// password has "://" and an "@" after it.
func mayHoldURLPassword(s string) bool {
	i := strings.Index(s, "://")
	return i >= 0 && strings.IndexByte(s[i:], '@') >= 0
}

func maskURLPasswords(s string) string {
	return urlPasswordRE().ReplaceAllStringFunc(s, func(m string) string {
		g := urlPasswordRE().FindStringSubmatch(m)
		if !literalPassword(g[2]) {
			return m
		}
		return g[1] + Masked + "@"
	})
}

// urlPasswordIn is urlPasswordRE's first match in s, after the cheap look.
func urlPasswordIn(s string) []int {
	if !mayHoldURLPassword(s) {
		return nil
	}
	return urlPasswordRE().FindStringSubmatchIndex(s)
}

// MaskValue is what Mask does to a value under a key that names no
// credential (command, args, url, socket): a deep copy whose strings have
// secret-looking values and URL passwords masked.
func MaskValue(v any) any { return maskLeaf(v) }

// MaskString is MaskValue for a string.
func MaskString(s string) string { return maskString(s) }
