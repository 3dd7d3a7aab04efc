package secret

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/piagent/piagent/internal/shquote"
)

// Refusal fields.
const (
	FieldEnv    = "env"
	FieldHeader = "header"
	FieldURL    = "url"
)

// ErrRefused matches every *Refusal with errors.Is.
var ErrRefused = errors.New("secret refused")

// ErrHeader is wrapped by every ParseHeader error.
var ErrHeader = errors.New("invalid header")

// A Refusal says why a value cannot be written into MCP config. It never
// holds the refused value.
//
// Rule is a stable code: "name:<word rule>" when the field name names a
// credential (name:token), "value:<value rule>" when the value looks like a
// secret (value:github-token), "url:<rule>" for URL checks (url:userinfo,
// url:scheme, url:plain-http, url:no-host, url:invalid, url:query, url:path).
type Refusal struct {
	Field  string // FieldEnv, FieldHeader or FieldURL
	Name   string // the env or header name, or the query parameter; "" for other URL rules
	Rule   string
	Reason string // a sentence, ending with ':' when Hint follows
	Hint   string // what to write instead, e.g. --env 'NAME=${NAME}'
}

func (r *Refusal) Error() string {
	if r.Hint == "" {
		return r.Reason
	}
	return r.Reason + " " + r.Hint
}

// Is makes errors.Is(err, ErrRefused) true for a *Refusal.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

const referInstead = ", so its value cannot be written into MCP config. Export it in your shell and reference it instead:"

// CheckEnv checks one --env NAME=VALUE. It returns nil or a *Refusal.
//
// Accepted: a value that is a reference (${VAR}, $env:VAR, {env:VAR}); a
// value made only of references, separators and one leading scheme word
// ("${USER}:${PASS}", "Bearer ${TOKEN}"); a `!command` value whose command
// text holds no secret-looking value (the adapter runs it to obtain the value
// at connect time); an empty value; and any other value when the name does
// not name a credential and the value does not look like a secret.
func CheckEnv(name, value string) error {
	return check(FieldEnv, name, value, func(scheme string) string {
		v := varName(name, false)
		return "--env " + shquote.Quote(name+"="+withScheme(scheme, v))
	})
}

// CheckHeader checks one --header "Name: value", with the same two layers
// and the same acceptances as CheckEnv. The hint's variable is the header
// name upper-cased with every character outside [A-Za-z0-9_] turned into
// '_' (Authorization → AUTHORIZATION, X-API-Key → X_API_KEY), and a scheme
// word written before a literal is kept: "Bearer abc…" gives
// --header 'Authorization: Bearer ${AUTHORIZATION}'.
func CheckHeader(name, value string) error {
	return check(FieldHeader, name, value, func(scheme string) string {
		return "--header " + shquote.Quote(name+": "+withScheme(scheme, varName(name, true)))
	})
}

func withScheme(scheme, v string) string {
	if scheme == "" {
		return "${" + v + "}"
	}
	return scheme + " ${" + v + "}"
}

func check(field, name, value string, hint func(scheme string) string) error {
	if value == "" || IsReference(value) || referencedOnly(value) {
		return nil
	}
	if strings.HasPrefix(value, "!") && !strings.HasPrefix(value, "!!") {
		if rule, ok := SecretValue(value[1:]); ok {
			return &Refusal{Field: field, Name: name, Rule: "value:" + rule,
				Reason: fmt.Sprintf("the command given for %s contains what looks like %s; a command that fetches a secret must not hold one", name, describe[rule])}
		}
		return nil
	}
	scheme, _ := splitScheme(value)
	if word, ok := CredentialName(name); ok {
		return &Refusal{Field: field, Name: name, Rule: "name:" + word,
			Reason: name + " names a credential" + referInstead, Hint: hint(scheme)}
	}
	if rule, ok := SecretValue(value); ok {
		return &Refusal{Field: field, Name: name, Rule: "value:" + rule,
			Reason: fmt.Sprintf("the value of %s looks like %s", name, describe[rule]) + referInstead, Hint: hint(scheme)}
	}
	return nil
}

// ParseHeader splits "Name: value". The name must be an RFC 7230 token with
// nothing between it and the colon; the value is trimmed of spaces and tabs
// and may hold no control character other than a tab. CR and LF are refused
// anywhere. Errors wrap ErrHeader and never quote the value.
func ParseHeader(s string) (name, value string, err error) {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return "", "", fmt.Errorf("%w: line break at byte %d", ErrHeader, i)
	}
	name, value, found := strings.Cut(s, ":")
	if !found {
		return "", "", fmt.Errorf("%w: want \"Name: value\", found no ':'", ErrHeader)
	}
	if name == "" {
		return "", "", fmt.Errorf("%w: empty name before ':'", ErrHeader)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return "", "", fmt.Errorf("%w: name has a character not allowed in a header name at byte %d", ErrHeader, i)
		}
	}
	value = strings.Trim(value, " \t")
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", "", fmt.Errorf("%w: value has control character 0x%02x", ErrHeader, c)
		}
	}
	return name, value, nil
}

// isTokenChar is RFC 7230's tchar.
func isTokenChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// refPlaceholder stands in for a reference while a URL is parsed.
const refPlaceholder = "piagent-ref"

// CheckURL checks a --url value: https, or http only when the host is
// loopback (localhost, 127.0.0.0/8, ::1); a host is required; userinfo is a
// secret and refused; a query parameter whose name names a credential and
// whose value is a literal, and a query value, path or fragment that looks
// like a secret, are refused. References are allowed anywhere except that a
// referenced host is not loopback. It returns nil or a *Refusal; the reason
// never quotes the URL.
func CheckURL(raw string) error {
	refuse := func(rule, reason, hint string) error {
		return &Refusal{Field: FieldURL, Rule: "url:" + rule, Reason: reason, Hint: hint}
	}
	if raw == "" {
		return refuse("no-host", "the URL is empty", "")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f {
			return refuse("invalid", fmt.Sprintf("the URL has a space or control character at byte %d", i), "")
		}
	}
	sub := refRE().ReplaceAllString(raw, refPlaceholder)
	u, err := url.Parse(sub)
	if err != nil {
		return refuse("invalid", "the URL cannot be parsed", "")
	}
	if u.User != nil {
		return refuse("userinfo", "the URL carries credentials before '@', and a credential cannot be written into MCP config. Remove them, export the secret in your shell and send it in a header instead:",
			"--header 'Authorization: Bearer ${TOKEN}'")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return refuse("no-host", "the URL has no host; write scheme://host/path", "")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopbackHost(u.Hostname()) {
			return refuse("plain-http", "http is accepted only for a loopback host (localhost, 127.0.0.0/8, [::1]); use https", "")
		}
	default:
		if strings.Contains(u.Scheme, refPlaceholder) {
			return refuse("scheme", "the URL scheme comes from a variable; write https://, or http:// for a loopback host", "")
		}
		return refuse("scheme", fmt.Sprintf("the URL scheme %q is not accepted; use https, or http for a loopback host", u.Scheme), "")
	}
	base := u.Scheme + "://" + u.Host + u.EscapedPath()
	base = strings.ReplaceAll(base, refPlaceholder, "${…}")
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		if dv == "" || placeholderOnly(dv) {
			continue
		}
		hint := "--url " + shquote.Quote(base+"?"+k+"=${"+varName(dk, true)+"}")
		if _, ok := CredentialName(dk); ok {
			return &Refusal{Field: FieldURL, Name: dk, Rule: "url:query",
				Reason: "query parameter " + dk + " names a credential" + referInstead, Hint: hint}
		}
		if rule, ok := SecretValue(dv); ok {
			return &Refusal{Field: FieldURL, Name: dk, Rule: "url:query",
				Reason: fmt.Sprintf("query parameter %s looks like %s", dk, describe[rule]) + referInstead, Hint: hint}
		}
	}
	if rule, ok := SecretValue(u.Path); ok {
		return refuse("path", fmt.Sprintf("the URL path holds what looks like %s", describe[rule])+
			", and a secret cannot be written into MCP config; export it in your shell and write ${VAR} in its place", "")
	}
	if rule, ok := SecretValue(u.Fragment); ok {
		return refuse("path", fmt.Sprintf("the URL fragment holds what looks like %s", describe[rule])+
			", and a secret cannot be written into MCP config; export it in your shell and write ${VAR} in its place", "")
	}
	return nil
}

func placeholderOnly(v string) bool {
	rest := strings.ReplaceAll(v, refPlaceholder, "")
	return rest != v && strings.Trim(rest, " :;,/@._-=+") == ""
}

// loopbackHost: localhost (one trailing dot allowed), an IPv4 address in
// 127.0.0.0/8 or ::1, an IPv4-mapped form included.
func loopbackHost(h string) bool {
	if strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil || a.Zone() != "" {
		return false
	}
	return a.Unmap().IsLoopback()
}
