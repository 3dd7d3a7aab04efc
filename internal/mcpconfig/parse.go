package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/lazyre"
)

// errInvalidConfig is wrapped by every reason the adapter rejects a config
// layer whose JSONC is well formed (settings not an object, bad settings.jev).
var errInvalidConfig = errors.New("invalid mcp config")

// parsedConfig is one file as the adapter's validateConfig sees it.
type parsedConfig struct {
	servers          map[string]Entry
	imports          []string // string entries of an imports array
	settings         map[string]any
	hasClaudePlugins bool
	claudePlugins    any      // as written
	ignored          []string // what the adapter passes over, in words
}

// parseConfig reads one config layer. blank reports a file that holds only
// whitespace and comments, which the adapter treats as absent. An error is
// a *jsonc.SyntaxError or wraps errInvalidConfig; the adapter then ignores
// the whole file. data is parseConfig's: what it returns may share its
// memory (jsonc.ParseOwned).
func parseConfig(data []byte) (cfg parsedConfig, blank bool, err error) {
	if blankJS(data) {
		return cfg, true, nil
	}
	v, blank, err := jsonc.ParseOwned(data)
	if err != nil || blank {
		return cfg, blank, err
	}
	return validateConfig(v)
}

// blankJS reports what the adapter's readValidatedConfig calls blank:
// nothing left after strip-json-comments and String.prototype.trim, whose
// white space includes the BOM, U+00A0 and the Unicode line separators. An
// unterminated block comment is not stripped, so it is not blank.
func blankJS(s []byte) bool {
	for i := 0; i < len(s); {
		switch {
		case bytes.HasPrefix(s[i:], []byte("//")):
			j := bytes.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j + 1
		case bytes.HasPrefix(s[i:], []byte("/*")):
			j := bytes.Index(s[i+2:], []byte("*/"))
			if j < 0 {
				return false
			}
			i += j + 4
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == 0x85 || !(unicode.IsSpace(r) || r == '\ufeff') {
				return false
			}
			i += n
		}
	}
	return true
}

// validateConfig mirrors the adapter's validateConfig: a non-object top
// level yields an empty config; a present settings value must be an object
// whose jev, when set, passes the adapter's validation.
func validateConfig(v any) (parsedConfig, bool, error) {
	var cfg parsedConfig
	raw, ok := v.(map[string]any)
	if !ok {
		cfg.servers = map[string]Entry{}
		return cfg, false, nil
	}
	servers := raw["mcpServers"]
	if servers == nil {
		servers = raw["mcp-servers"]
	}
	cfg.servers, cfg.ignored = serverEntries(servers)
	if list, ok := raw["imports"].([]any); ok {
		cfg.imports = []string{}
		for _, k := range list {
			if s, ok := k.(string); ok {
				cfg.imports = append(cfg.imports, s)
			}
		}
	}
	if s, ok := raw["settings"]; ok {
		m, ok := s.(map[string]any)
		if !ok {
			return cfg, false, fmt.Errorf("%w: settings must be an object", errInvalidConfig)
		}
		if jev, ok := m["jev"]; ok {
			if err := validateJev(jev); err != nil {
				return cfg, false, fmt.Errorf("%w: %s", errInvalidConfig, err)
			}
		}
		cfg.settings = m
	}
	if cp, ok := raw["claudePlugins"]; ok {
		cfg.hasClaudePlugins, cfg.claudePlugins = true, cp
	}
	return cfg, false, nil
}

// serverEntries keeps the object-valued entries of a server map, and says
// what it passed over, as the adapter does without a word.
func serverEntries(v any) (map[string]Entry, []string) {
	m, ok := v.(map[string]any)
	if !ok {
		out := map[string]Entry{}
		if v == nil {
			return out, nil
		}
		return out, []string{fmt.Sprintf("mcpServers is %s, not an object: the adapter reads no server from it", jsonKind(v))}
	}
	// made at its size, and read in the map's order: only what is passed
	// over needs an order (its words)
	out := make(map[string]Entry, len(m))
	var skipped []string
	for name, v := range m {
		if entry, ok := v.(map[string]any); ok && name != "__proto__" {
			out[name] = entry
		} else if !ok {
			skipped = append(skipped, name)
		}
	}
	slices.Sort(skipped)
	var ignored []string
	for _, name := range skipped {
		ignored = append(ignored, fmt.Sprintf("mcpServers.%s is %s, not an object: the adapter skips it", name, jsonKind(m[name])))
	}
	return out, ignored
}

// jsonKind names a decoded JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// sortedNames gives a deterministic order for a decoded object's keys (the
// adapter would use the file's order; only name collisions can tell).
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

var (
	jevKeys = map[string]bool{
		"semanticSearch": true, "scriptEvaluation": true, "allowedServers": true, "model": true,
		"requestTimeoutMs": true, "maxRetries": true, "maxStateBytes": true, "maxQuestionsPerRequest": true,
		"maxEvaluationsPerScript": true, "maxEvaluationBytesPerScript": true, "maxEvaluationTokensPerScript": true,
		"semanticCandidateLimit": true, "semanticMinProbability": true,
	}
	jevIntegers = []struct {
		key      string
		min, max float64
	}{
		{"requestTimeoutMs", 100, 30_000}, {"maxRetries", 0, 2}, {"maxStateBytes", 1, 1_048_576},
		{"maxQuestionsPerRequest", 1, 128}, {"maxEvaluationsPerScript", 1, 32},
		{"maxEvaluationBytesPerScript", 1, 4_194_304}, {"maxEvaluationTokensPerScript", 1, 1_000_000},
		{"semanticCandidateLimit", 2, 127},
	}
	jevControl    = lazyre.New("[\x00-\x1f\x7f]")
	jevFloating   = lazyre.New(`(?i)latest|preview`)
	dangerousKeys = map[string]bool{"__proto__": true, "constructor": true, "prototype": true}
)

// validateJev is the adapter's validateJevSettings, reduced to accept or
// reject, in the adapter's order of checks.
func validateJev(v any) error {
	if b, ok := v.(bool); ok && !b {
		return nil
	}
	in, ok := v.(map[string]any)
	if !ok {
		return errors.New("settings.jev must be an object")
	}
	for _, k := range sortedNames(in) {
		if !jevKeys[k] {
			return fmt.Errorf("settings.jev.%s is not supported", k)
		}
	}
	if a, ok := in["allowedServers"]; ok {
		list, ok := a.([]any)
		bad := !ok
		for _, n := range list {
			s, ok := n.(string)
			if !ok || s == "" || dangerousKeys[s] || jevControl().MatchString(s) {
				bad = true
			}
		}
		if bad {
			return errors.New("settings.jev.allowedServers must contain non-empty safe server names")
		}
	}
	if m := in["model"]; m != nil { // `??` falls back on null too
		s, ok := m.(string)
		if n := len(utf16.Encode([]rune(s))); !ok || n == 0 || n > 128 || jevFloating().MatchString(s) {
			return errors.New("settings.jev.model must be a pinned model name")
		}
	}
	if p := in["semanticMinProbability"]; p != nil {
		f, ok := p.(float64)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) || f < 0 || f > 1 {
			return errors.New("settings.jev.semanticMinProbability must be from 0 to 1")
		}
	}
	for _, k := range []string{"semanticSearch", "scriptEvaluation"} {
		if b, ok := in[k]; ok {
			if _, ok := b.(bool); !ok {
				return fmt.Errorf("settings.jev.%s must be a boolean", k)
			}
		}
	}
	for _, r := range jevIntegers {
		if x, ok := in[r.key]; ok {
			f, ok := x.(float64)
			if !ok || f != math.Trunc(f) || f < r.min || f > r.max {
				return fmt.Errorf("settings.jev.%s must be an integer from %g to %g", r.key, r.min, r.max)
			}
		}
	}
	return nil
}

// claudePluginRef is one valid claudePlugins entry.
type claudePluginRef struct {
	path string
	mcp  bool
}

// parseClaudePlugins keeps the entries the adapter accepts: an object with a
// non-empty path, boolean mcp/skills when set, and at least one enabled.
func parseClaudePlugins(v any) []claudePluginRef {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []claudePluginRef
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		p, ok := m["path"].(string)
		if !ok || len(trimJS(p)) == 0 {
			continue
		}
		mcp, mcpOK := boolField(m, "mcp")
		skills, skillsOK := boolField(m, "skills")
		if !mcpOK || !skillsOK || (!mcp && !skills) {
			continue
		}
		out = append(out, claudePluginRef{path: p, mcp: mcp})
	}
	return out
}

// boolField reports a key's boolean value; ok is false when the key is set
// to something that is not a boolean.
func boolField(m map[string]any, k string) (val, ok bool) {
	v, present := m[k]
	if !present {
		return false, true
	}
	b, isBool := v.(bool)
	return b, isBool
}
