// Package jsonc reads JSON with comments and trailing commas exactly the way
// pi-mcp-adapter does: Node's UTF-8 decoding of the file (readFileSync with
// "utf-8"), strip-json-comments with trailingCommas, then JSON.parse. Where
// they differ from Go's own decoding, this package follows them: an
// unterminated line comment at the end is fine, an unterminated block
// comment is not, a byte-order mark is a syntax error, "[,]" is an empty
// array, a number beyond float64 is ±Infinity (kept as the json.Number
// written, which the digest reads as JavaScript does), duplicate keys keep
// the last.
// The differential test in test/e2e runs the adapter's own
// parseJsonWithComments on the same inputs.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// SyntaxError says where a document stopped being JSONC. Line and Column are
// 1-based; Column counts bytes.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ErrBeyondLimits marks a document the adapter would read but this package
// cannot (nesting deeper than Go's JSON decoder allows). Callers must fail
// closed: the file exists and says something piagent cannot see.
var ErrBeyondLimits = errors.New("the document is beyond what piagent can read")

// Parse decodes data. Blank reports a document that holds nothing but
// whitespace and comments, which the adapter treats as an absent file; value
// is nil then. Numbers decode as float64, as JavaScript holds them; one
// beyond float64's range as the json.Number written.
func Parse(data []byte) (value any, blank bool, err error) {
	return parse(DecodeUTF8(data))
}

// ParseOwned is Parse for a caller that lets go of data, a file it has
// just read: the values returned may share data's memory (a file that is
// valid UTF-8, nearly every one, is read where it lies, not copied first),
// so data must never be changed after.
func ParseOwned(data []byte) (value any, blank bool, err error) {
	if !utf8.Valid(data) {
		return parse(DecodeUTF8(data))
	}
	return parse(unsafe.String(unsafe.SliceData(data), len(data)))
}

func parse(text string) (value any, blank bool, err error) {
	if v, ok := fastDecode(text); ok {
		return v, false, nil
	}
	// Blank, or not something the fast path takes: stripped, encoding/json
	// gives the answer, and for a document that is not JSON, its error and
	// position.
	stripped := Strip(text)
	if jsTrim(stripped) == "" {
		return nil, true, nil
	}
	dec := json.NewDecoder(strings.NewReader(stripped))
	dec.UseNumber()
	if err := dec.Decode(&value); err != nil {
		return nil, false, syntaxError(stripped, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := int(dec.InputOffset())
		for off < len(stripped) && isJSONSpace(stripped[off]) {
			off++
		}
		return nil, false, positioned(stripped, off, "invalid character after the top-level value")
	}
	return numbers(value), false, nil
}

// IsBlank reports whether data holds only whitespace and comments, as the
// adapter decides it: strip-json-comments, then String.prototype.trim.
func IsBlank(data []byte) bool {
	return jsTrim(Strip(DecodeUTF8(data))) == ""
}

// Strip is strip-json-comments(s, {trailingCommas: true}): comments and
// trailing commas become spaces (line breaks kept), so every byte keeps its
// offset. An unterminated line comment at the end is stripped; an
// unterminated block comment is left as it is, for the parser to refuse.
func Strip(s string) string {
	const (
		none = iota
		line
		block
	)
	// out is the result; pending is what follows the last comma outside a
	// string, held back until it is known whether a } or ] makes that
	// comma a trailing one: one slice used again, not a builder made anew
	// at every comma.
	var out strings.Builder
	out.Grow(len(s))
	var pending []byte
	inString, comment := false, none
	offset, commaIndex := 0, -1
	blank := func(dst []byte, from, to int) []byte {
		for _, c := range []byte(s[from:to]) {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				c = ' '
			}
			dst = append(dst, c)
		}
		return dst
	}
	escaped := func(i int) bool {
		n := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			n++
		}
		return n%2 == 1
	}
	next := func(i int) byte {
		if i+1 < len(s) {
			return s[i+1]
		}
		return 0
	}
	for i := 0; i < len(s); i++ {
		if inString {
			// Inside a string only its closing quote changes anything.
			j := strings.IndexByte(s[i:], '"')
			if j < 0 {
				break
			}
			i += j
		}
		c, n := s[i], next(i)
		if comment == none && c == '"' && !escaped(i) {
			inString = !inString
		}
		if inString {
			continue
		}
		switch {
		case comment == none && c == '/' && n == '/':
			pending = append(pending, s[offset:i]...)
			offset, comment = i, line
			i++
		case comment == line && c == '\r' && n == '\n':
			i++
			comment = none
			pending = blank(pending, offset, i)
			offset = i
			continue
		case comment == line && c == '\n':
			comment = none
			pending = blank(pending, offset, i)
			offset = i
		case comment == none && c == '/' && n == '*':
			pending = append(pending, s[offset:i]...)
			offset, comment = i, block
			i++
			continue
		case comment == block && c == '*' && n == '/':
			i++
			comment = none
			pending = blank(pending, offset, i+1)
			offset = i + 1
			continue
		case comment == none:
			if commaIndex != -1 {
				if c == '}' || c == ']' {
					pending = append(pending, s[offset:i]...)
					out.WriteByte(' ')
					out.Write(pending[1:])
					pending = pending[:0]
					offset, commaIndex = i, -1
				} else if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
					pending = append(pending, s[offset:i]...)
					offset, commaIndex = i, -1
				}
			} else if c == ',' {
				out.Write(pending)
				out.WriteString(s[offset:i])
				pending = pending[:0]
				offset, commaIndex = i, i
			}
		}
	}
	out.Write(pending)
	if comment == line {
		out.Write(blank(nil, offset, len(s)))
	} else {
		out.WriteString(s[offset:])
	}
	return out.String()
}

// DecodeUTF8 turns bytes into text the way Node decodes a UTF-8 file: every
// maximal invalid subpart becomes one U+FFFD (the WHATWG decoder), and a
// byte-order mark is kept.
func DecodeUTF8(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	var b strings.Builder
	b.Grow(len(data) + 8)
	for i := 0; i < len(data); {
		c := data[i]
		if c < 0x80 {
			b.WriteByte(c)
			i++
			continue
		}
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lo = 2, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			need = 2
		case c == 0xED:
			need, hi = 2, 0x9F
		case c == 0xF0:
			need, lo = 3, 0x90
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		case c == 0xF4:
			need, hi = 3, 0x8F
		default:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(data) || data[j] < lo || data[j] > hi {
				ok = false
				break
			}
			lo, hi = 0x80, 0xBF
			j++
		}
		if !ok {
			b.WriteRune(utf8.RuneError) // the maximal subpart data[i:j]
			i = j
			continue
		}
		b.Write(data[i:j])
		i = j
	}
	return b.String()
}

// jsTrim is String.prototype.trim: ECMAScript white space and line
// terminators, the byte-order mark included.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// numbers turns json.Number into the float64 JavaScript holds. A literal
// beyond float64 (JavaScript holds ±Infinity, or 0 below its range) stays
// the json.Number as written: encoding/json writes it back as written, so
// a preview shows "1e400" and never fails on it, and the digest reads it
// as JavaScript does (issue 39, item 5).
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if errors.Is(err, strconv.ErrRange) {
			return x
		}
		if err != nil {
			return math.NaN() // cannot happen: the decoder checked the grammar
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

func syntaxError(data string, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		if strings.Contains(se.Error(), "exceeded max depth") {
			return fmt.Errorf("%w: nesting deeper than 10000", ErrBeyondLimits)
		}
		off := max(int(se.Offset)-1, 0)
		if strings.Contains(se.Error(), "in literal") {
			// point at the literal, not the character that ended it
			for off > 0 && (data[off-1] >= 'a' && data[off-1] <= 'z') {
				off--
			}
		}
		return positioned(data, off, se.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return positioned(data, len(data), "unexpected end of JSON input")
	}
	return positioned(data, int(dec.InputOffset()), err.Error())
}

func positioned(data string, off int, msg string) *SyntaxError {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count([]byte(data[:off]), []byte("\n"))
	col := off - strings.LastIndexByte(data[:off], '\n')
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}
