package imports

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// readCodex reads ~/.codex/config.toml as TOML, else ~/.codex/config.json as
// JSONC, from `mcp_servers` (else `mcpServers`), translating codex's field
// names into the adapter's.
func (r *reader) readCodex() {
	i, doc := r.first(r.homePath(".codex", "config.toml"), r.homePath(".codex", "config.json"))
	if i >= 0 {
		r.addServers(codexServers(doc), i, true)
	}
}

// codexServers is extractServers for kind codex.
func codexServers(doc any) map[string]map[string]any {
	out := objectEntries(serverMap(doc, "mcp_servers", "mcpServers"))
	for name, e := range out {
		out[name] = codexEntry(e)
	}
	return out
}

// codexEntry translates one codex server: bearer_token_env_var becomes
// bearerTokenEnv (and auth "bearer" when auth is unset), http_headers is laid
// over headers, and each env_http_headers entry not already a header becomes
// one whose value is `$env:VAR`. The three codex keys are removed.
func codexEntry(e map[string]any) map[string]any {
	m := shallowCopy(e)
	if v, ok := m["bearer_token_env_var"].(string); ok {
		m["bearerTokenEnv"] = v
		if _, set := m["auth"]; !set {
			m["auth"] = "bearer"
		}
	}
	if hh, ok := m["http_headers"].(map[string]any); ok {
		headers := spread(m["headers"])
		for k, v := range hh {
			headers[k] = v
		}
		m["headers"] = headers
	}
	if eh, ok := m["env_http_headers"].(map[string]any); ok {
		headers := spread(m["headers"])
		for k, v := range eh {
			if s, ok := v.(string); ok && jsUndefined(headers, k) {
				headers[k] = "$env:" + s
			}
		}
		m["headers"] = headers
	}
	delete(m, "bearer_token_env_var")
	delete(m, "http_headers")
	delete(m, "env_http_headers")
	return m
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER; smol-toml rejects a
// document holding an integer beyond it.
const maxSafeInteger = 1<<53 - 1

// errUnsafeInteger is returned for an integer smol-toml cannot hold.
var errUnsafeInteger = errors.New("integer value cannot be represented losslessly")

// parseTOML decodes a TOML document into JSON-like values, as the adapter's
// smol-toml gives them to JavaScript: integers and floats as float64 (NaN and
// infinities as in JavaScript), dates and times as their ISO strings.
func parseTOML(data []byte) (any, error) {
	m, err := unmarshalTOML(data)
	if err != nil {
		return nil, err
	}
	v, err := jsValue(m)
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

func jsValue(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return nil, nil
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			y, err := jsValue(x)
			if err != nil {
				return nil, err
			}
			out[k] = y
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			y, err := jsValue(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	case int64:
		if v > maxSafeInteger || v < -maxSafeInteger {
			return nil, fmt.Errorf("toml: %w", errUnsafeInteger)
		}
		return float64(v), nil
	case float64:
		if math.IsNaN(v) {
			return math.NaN(), nil // one NaN, whatever its sign bit
		}
		return v, nil
	case time.Time:
		if v.Location() == time.UTC {
			return v.Format("2006-01-02T15:04:05.000Z"), nil
		}
		return v.Format("2006-01-02T15:04:05.000-07:00"), nil
	case toml.LocalDateTime:
		return v.AsTime(time.UTC).Format("2006-01-02T15:04:05.000"), nil
	case toml.LocalDate:
		return v.AsTime(time.UTC).Format("2006-01-02"), nil
	case toml.LocalTime:
		return fmt.Sprintf("%02d:%02d:%02d.%03d", v.Hour, v.Minute, v.Second, v.Nanosecond/1e6), nil
	}
	return v, nil
}
