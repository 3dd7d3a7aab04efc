package approval

import (
	"encoding/json"
	"errors"
)

// A walker over JSON text that json.Valid has already accepted: it finds the
// members of an object and the extent of a value in one pass, so a store
// with thousands of decisions loads without decoding each level again.

var errNotObject = errors.New("want an object")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just after the string literal starting at i,
// and whether it contains an escape.
func skipString(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return i, escaped
}

// skipValue returns the index just after the value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _ = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// trim returns the value in raw without surrounding white space.
func trim(raw []byte) []byte {
	i := skipSpace(raw, 0)
	j := len(raw)
	for j > i && (raw[j-1] == ' ' || raw[j-1] == '\t' || raw[j-1] == '\n' || raw[j-1] == '\r') {
		j--
	}
	return raw[i:j]
}

// members calls fn for each member of the valid JSON object raw, in order
// (a repeated key is reported each time). Values are sub-slices of raw.
func members(raw []byte, fn func(key string, val json.RawMessage) error) error {
	raw = trim(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return errNotObject
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return nil
	}
	for i < len(raw) {
		kend, _ := skipString(raw, i)
		key, err := unquote(raw[i:kend])
		if err != nil {
			return err
		}
		i = skipSpace(raw, kend)
		i = skipSpace(raw, i+1) // the colon
		vend := skipValue(raw, i)
		if err := fn(key, json.RawMessage(raw[i:vend])); err != nil {
			return err
		}
		i = skipSpace(raw, vend)
		if i >= len(raw) || raw[i] == '}' {
			return nil
		}
		i = skipSpace(raw, i+1) // the comma
	}
	return nil
}

// unquote decodes the valid JSON string literal lit.
func unquote(lit []byte) (string, error) {
	if len(lit) < 2 || lit[0] != '"' {
		return "", errors.New("want a string")
	}
	if _, escaped := skipString(lit, 0); !escaped {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", err
	}
	return s, nil
}
