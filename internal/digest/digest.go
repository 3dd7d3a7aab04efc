// Package digest is the one definition of a server definition's digest, the
// value an approval is pinned to.
//
// The digest is "sha256:" followed by the lowercase hex SHA-256 of the
// canonical text, and the canonical text is exactly what the TypeScript
// piagent hashes:
//
//	JSON.stringify(sortKeysRecursively(value), null, 2) + "\n"
//
// so that a decision recorded by either tool holds in the other. Reproducing
// JavaScript byte for byte takes three rules that encoding/json does not
// follow:
//
//   - Key order. Every object is rebuilt with its keys inserted in
//     Object.keys(o).sort() order, which compares UTF-16 code units, and
//     JSON.stringify then enumerates keys that are array indices (the
//     canonical decimal forms "0" to "4294967294") first, in ascending
//     numeric order, followed by the other keys in insertion order.
//   - Strings. Only '"', '\\' and control characters below U+0020 are
//     escaped: \b \f \n \r \t in short form, the rest as \u00xx with
//     lowercase hex. No HTML escaping; U+2028 and U+2029 stay as they are.
//   - Numbers. Number.prototype.toString: the shortest decimal that round
//     trips, in exponent form ("1e+21", "1.5e-7") when the decimal exponent
//     is at least 21 or below -6; -0 prints "0"; NaN and ±Infinity print
//     "null", as JSON.stringify prints them.
//
// Values are what encoding/json decodes into an any (map[string]any, []any,
// string, float64, bool, nil); json.Number, int and int64 are accepted too and
// become the float64 JavaScript would hold, so integers beyond 2^53 lose
// precision exactly as they do in JavaScript. A nil map is an empty object and
// a nil slice an empty array. Strings must be valid UTF-8.
//
// Lone surrogates. JavaScript strings can hold an unpaired UTF-16 surrogate
// (JSON text "\ud83d"), which JSON.stringify writes back as the escape
// "\ud83d". A Go string cannot hold one: encoding/json decodes it to U+FFFD,
// so a definition containing one hashes differently here than in the
// TypeScript piagent. A decision the TypeScript tool recorded for such a
// definition therefore reads as approval-changed under piagent and has to be
// approved once more; this fails closed and no other definition is affected.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// ErrUnsupported is returned for a value of a type the canonical form has no
// encoding for.
var ErrUnsupported = errors.New("digest: unsupported value")

// ErrInvalidUTF8 is returned for a string or key that is not valid UTF-8;
// JavaScript could not have produced it, so it has no JavaScript digest.
var ErrInvalidUTF8 = errors.New("digest: string is not valid utf-8")

// Prefix starts every digest.
const Prefix = "sha256:"

// Canonical returns JSON.stringify(sortedRecursively(v), null, 2) + "\n".
func Canonical(v any) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 256)}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	e.buf = append(e.buf, '\n')
	return e.buf, nil
}

// Of returns "sha256:" + hex(sha256(Canonical(v))).
func Of(v any) (string, error) {
	// the canonical bytes are hashed and let go: their buffer is reused
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.buf = e.buf[:0]
	if err := e.value(v, 0); err != nil {
		return "", err
	}
	e.buf = append(e.buf, '\n')
	return Bytes(e.buf), nil
}

var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 256)} }}

// Bytes returns "sha256:" + hex(sha256(data)), the digest of a pinned file.
func Bytes(data []byte) string { return Sum(sha256.Sum256(data)) }

// Sum is Bytes for content already hashed.
func Sum(sum [sha256.Size]byte) string {
	var out [len(Prefix) + 2*sha256.Size]byte
	copy(out[:], Prefix)
	hex.Encode(out[len(Prefix):], sum[:])
	return string(out[:])
}

type encoder struct {
	buf []byte
}

func (e *encoder) indent(depth int) {
	e.buf = append(e.buf, '\n')
	for range depth {
		e.buf = append(e.buf, ' ', ' ')
	}
}

func (e *encoder) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case string:
		return e.string(x)
	case float64:
		e.buf = appendNumber(e.buf, x)
	case int:
		e.buf = appendNumber(e.buf, float64(x))
	case int64:
		e.buf = appendNumber(e.buf, float64(x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%w: json.Number %q", ErrUnsupported, string(x))
		}
		// Out of range parses to ±Inf (or 0), as JavaScript's parser does.
		e.buf = appendNumber(e.buf, f)
	case []any:
		return e.array(x, depth)
	case map[string]any:
		return e.object(x, depth)
	default:
		return fmt.Errorf("%w: %T", ErrUnsupported, v)
	}
	return nil
}

func (e *encoder) array(a []any, depth int) error {
	if len(a) == 0 {
		e.buf = append(e.buf, '[', ']')
		return nil
	}
	e.buf = append(e.buf, '[')
	for i, v := range a {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.indent(depth + 1)
		if err := e.value(v, depth+1); err != nil {
			return err
		}
	}
	e.indent(depth)
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) object(m map[string]any, depth int) error {
	if len(m) == 0 {
		e.buf = append(e.buf, '{', '}')
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !utf8.ValidString(k) {
			return ErrInvalidUTF8
		}
		keys = append(keys, k)
	}
	sortKeys(keys)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.indent(depth + 1)
		if err := e.string(k); err != nil {
			return err
		}
		e.buf = append(e.buf, ':', ' ')
		if err := e.value(m[k], depth+1); err != nil {
			return err
		}
	}
	e.indent(depth)
	e.buf = append(e.buf, '}')
	return nil
}

// sortKeys orders keys the way JSON.stringify enumerates an object built by
// inserting them in Object.keys(o).sort() order: array indices first,
// numerically, then the rest by UTF-16 code units.
func sortKeys(keys []string) {
	slices.SortFunc(keys, func(a, b string) int {
		ia, aok := arrayIndex(a)
		ib, bok := arrayIndex(b)
		switch {
		case aok && bok:
			return cmpUint(ia, ib)
		case aok:
			return -1
		case bok:
			return 1
		}
		return compareUTF16(a, b)
	})
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arrayIndex reports whether s is the canonical decimal form of an array
// index, an integer in [0, 2^32-2].
func arrayIndex(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n <= math.MaxUint32-1
}

// compareUTF16 compares valid UTF-8 strings by their UTF-16 code units, the
// order of JavaScript's default sort. It differs from byte order only where a
// supplementary character (a surrogate pair, 0xD800..0xDBFF first) meets a
// character in U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			if c := cmpUint(uint64(firstUnit(ra)), uint64(firstUnit(rb))); c != 0 {
				return c
			}
			// Both supplementary with the same high surrogate: the low
			// surrogates order as the code points do.
			return cmpUint(uint64(ra), uint64(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmpUint(uint64(len(a)), uint64(len(b)))
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

func (e *encoder) string(s string) error {
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		e.buf = append(e.buf, s[start:i]...)
		switch c {
		case '"':
			e.buf = append(e.buf, '\\', '"')
		case '\\':
			e.buf = append(e.buf, '\\', '\\')
		case '\b':
			e.buf = append(e.buf, '\\', 'b')
		case '\f':
			e.buf = append(e.buf, '\\', 'f')
		case '\n':
			e.buf = append(e.buf, '\\', 'n')
		case '\r':
			e.buf = append(e.buf, '\\', 'r')
		case '\t':
			e.buf = append(e.buf, '\\', 't')
		default:
			const hexDigits = "0123456789abcdef"
			e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
	return nil
}

// appendNumber appends f as Number.prototype.toString prints it, and NaN and
// the infinities as JSON.stringify prints them.
func appendNumber(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, "null"...)
	}
	if f == 0 {
		return append(buf, '0') // also -0
	}
	if f < 0 {
		buf = append(buf, '-')
		f = -f
	}
	// Shortest round-trip digits d1.d2d3…e±x; n is the position of the
	// decimal point relative to the digits (value = 0.digits × 10^n).
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	mant, exp := s, 0
	for i := range s {
		if s[i] == 'e' {
			mant = s[:i]
			x, _ := strconv.Atoi(string(s[i+1:]))
			exp = x
			break
		}
	}
	var digits [24]byte
	d := digits[:0]
	for _, c := range mant {
		if c != '.' {
			d = append(d, c)
		}
	}
	k, n := len(d), exp+1
	switch {
	case k <= n && n <= 21:
		buf = append(buf, d...)
		for range n - k {
			buf = append(buf, '0')
		}
	case 0 < n && n <= 21:
		buf = append(buf, d[:n]...)
		buf = append(buf, '.')
		buf = append(buf, d[n:]...)
	case -6 < n && n <= 0:
		buf = append(buf, '0', '.')
		for range -n {
			buf = append(buf, '0')
		}
		buf = append(buf, d...)
	default:
		buf = append(buf, d[0])
		if k > 1 {
			buf = append(buf, '.')
			buf = append(buf, d[1:]...)
		}
		buf = append(buf, 'e')
		if n-1 >= 0 {
			buf = append(buf, '+')
		}
		buf = strconv.AppendInt(buf, int64(n-1), 10)
	}
	return buf
}

// AppendJS appends v as JSON.stringify writes it, compact, with every
// object's keys in Object.keys(o).sort() order (UTF-16 code units) and
// nothing before an integer-like key: the adapter's stableStringify
// (pi-mcp-adapter utils.ts), which its configHash hashes. Undefined, which
// stableStringify writes as the bare word undefined, is the value
// Undefined.
func AppendJS(buf []byte, v any) ([]byte, error) {
	e := &encoder{buf: buf}
	err := e.stable(v)
	return e.buf, err
}

// Undefined stands for JavaScript's undefined in AppendJS.
var Undefined = &struct{ undefined bool }{true}

func (e *encoder) stable(v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.string(k); err != nil {
				return err
			}
			e.buf = append(e.buf, ':')
			if err := e.stable(x[k]); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []any:
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.stable(el); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		if v == Undefined {
			e.buf = append(e.buf, "undefined"...)
			return nil
		}
		return e.value(v, 0)
	}
	return nil
}
