package mcpcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/piagent/piagent/internal/digest"
)

// ConfigHash is the adapter's computeServerHash (pi-mcp-adapter 2.36
// metadata-cache.ts) for a merged server definition: the SHA-256, in hex,
// of stableStringify of the fields that decide which server it is, with
// ${VAR}, $env:VAR and {env:VAR} interpolated from the environment the
// adapter runs in (getenv) and "~" read as home. A cache entry whose
// configHash is not this one was written for another definition (another
// project's server of the same name, or this one before an edit): the
// adapter does not use it, and neither does piagent (issue 39, item 3).
// ok is false where the adapter throws (a url that is not a string, names
// a variable that is unset, or does not parse; a value it cannot
// interpolate): no entry belongs to such a definition. A definition from a
// Pi agent plugin, whose args, env, cwd and headers the adapter hashes as
// written, is not told apart here: its entry matches only when those hold
// no variable.
func ConfigHash(def map[string]any, getenv func(string) (string, bool), home string) (hash string, ok bool) {
	c := hasher{getenv: getenv, home: home}
	field := func(k string) any {
		if v, ok := def[k]; ok {
			return v
		}
		return digest.Undefined
	}
	identity := map[string]any{
		"command":               field("command"),
		"args":                  field("args"),
		"socket":                c.configPath(field("socket")),
		"env":                   c.record(field("env")),
		"cwd":                   c.configPath(field("cwd")),
		"url":                   c.url(field("url")),
		"headers":               c.record(field("headers")),
		"requestHeadersCommand": c.headersCommand(field("requestHeadersCommand")),
		"auth":                  field("auth"),
		"protocolVersion":       field("protocolVersion"),
		"bearerToken":           c.bearerToken(field("bearerToken"), field("bearerTokenEnv")),
		"bearerTokenEnv":        field("bearerTokenEnv"),
		"exposeResources":       field("exposeResources"),
		"includeTools":          field("includeTools"),
		"excludeTools":          field("excludeTools"),
	}
	if c.err != nil {
		return "", false
	}
	text, err := digest.AppendJS(nil, identity)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:]), true
}

type hasher struct {
	getenv func(string) (string, bool)
	home   string
	err    error
}

var errThrows = errors.New("the adapter throws here")

func (c *hasher) fail() any {
	c.err = errThrows
	return digest.Undefined
}

// The three forms interpolateEnvVars replaces, one after the other.
var envForms = []*regexp.Regexp{
	regexp.MustCompile(`\$\{(\w+)\}`),
	regexp.MustCompile(`\$env:(\w+)`),
	regexp.MustCompile(`\{env:(\w+)\}`),
}

func (c *hasher) interpolate(s string) string {
	for _, re := range envForms {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			v, _ := c.getenv(re.FindStringSubmatch(m)[1])
			return v
		})
	}
	return s
}

// secret is interpolateSecretExpression: "!cmd" stays as written, "!!x"
// is "!x" interpolated.
func (c *hasher) secret(v any) any {
	s, ok := v.(string)
	if !ok {
		return c.fail() // value.startsWith is not a function
	}
	if strings.HasPrefix(s, "!!") {
		return c.interpolate(s[1:])
	}
	if strings.HasPrefix(s, "!") {
		return s
	}
	return c.interpolate(s)
}

// falsy is JavaScript's !v for a JSON value.
func falsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case float64:
		return x == 0 || x != x
	}
	return v == digest.Undefined
}

// record is interpolateEnvRecord.
func (c *hasher) record(v any) any {
	if falsy(v) {
		return digest.Undefined
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c.fail() // Object.entries of an array or a string, then startsWith: not followed
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = c.secret(e)
	}
	return out
}

// configPath is resolveConfigPath.
func (c *hasher) configPath(v any) any {
	if v == digest.Undefined {
		return v
	}
	s, ok := v.(string)
	if !ok {
		return c.fail()
	}
	r := c.interpolate(s)
	switch {
	case r == "~":
		return c.home
	case strings.HasPrefix(r, "~/"), strings.HasPrefix(r, `~\`):
		return filepath.Join(c.home, r[2:])
	}
	return r
}

// url is resolveServerUrl.
func (c *hasher) url(v any) any {
	if v == digest.Undefined || v == nil {
		return digest.Undefined
	}
	s, ok := v.(string)
	if !ok {
		return c.fail()
	}
	for _, re := range envForms {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			if _, set := c.getenv(m[1]); !set {
				return c.fail()
			}
		}
	}
	r := c.interpolate(s)
	if u, err := url.Parse(r); err != nil || u.Scheme == "" {
		return c.fail()
	}
	return r
}

func (c *hasher) headersCommand(v any) any {
	if falsy(v) {
		return digest.Undefined
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c.fail()
	}
	out := map[string]any{"timeoutMs": digest.Undefined, "args": digest.Undefined}
	if t, ok := m["timeoutMs"]; ok {
		out["timeoutMs"] = t
	}
	cmd, ok := m["command"].(string)
	if !ok {
		return c.fail()
	}
	out["command"] = c.interpolate(cmd)
	if a, ok := m["args"]; ok && a != nil {
		list, ok := a.([]any)
		if !ok {
			return c.fail()
		}
		args := make([]any, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return c.fail()
			}
			args[i] = c.interpolate(s)
		}
		out["args"] = args
	}
	env, ok := m["env"]
	if !ok {
		env = digest.Undefined
	}
	out["env"] = c.record(env)
	return out
}

// bearerToken is resolveBearerToken: the token itself goes into the hash,
// never anywhere else.
func (c *hasher) bearerToken(token, envName any) any {
	if token != digest.Undefined {
		return c.secret(token)
	}
	if falsy(envName) {
		return digest.Undefined
	}
	name, ok := envName.(string)
	if !ok {
		return digest.Undefined // environment[non-string]: a lookup that finds nothing
	}
	if v, set := c.getenv(name); set {
		return v
	}
	return digest.Undefined
}
