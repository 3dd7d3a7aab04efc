package jsonc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// fastDecode decodes one JSONC document, with nothing but whitespace and
// comments around it, into the values Parse returns (float64 numbers,
// map[string]any with the last of duplicate keys, []any), in one pass and
// without reflection: comments are whitespace to it and a comma before a }
// or ] is nothing, as Strip makes them. ok is false for anything it does
// not accept, which Parse then strips and hands to encoding/json for the
// same answer and its error: on every document the fast path accepts, it
// and Strip with encoding/json agree (FuzzFastDecode).
func fastDecode(s string) (v any, ok bool) {
	d := decoder{s: s}
	return d.document()
}

// DecodeJSON decodes s as strict JSON (no comments, no trailing commas,
// valid UTF-8) into the values encoding/json.Unmarshal gives an any:
// float64, string, bool, nil, []any, map[string]any. ok is false for
// anything it does not take, numbers beyond float64, depths past 1,000 and
// objects with a key twice included, for the caller to hand to
// encoding/json: wherever it answers, the two agree (FuzzDecodeJSON). A
// repeated key is refused because encoding/json, decoding into a struct,
// reports a wrong type in the first of two values that the last would hide.
func DecodeJSON(s string) (v any, ok bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	d := decoder{s: s, strict: true}
	return d.document()
}

// document reads one value with nothing but space around it.
func (d *decoder) document() (any, bool) {
	d.space()
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.s)
}

type decoder struct {
	s      string
	i      int
	strict bool // JSON itself: no comments, trailing commas or infinities
}

// maxFastDepth is below encoding/json's limit: deeper documents take the
// slow path, which reports them.
const maxFastDepth = 1000

// space skips whitespace and comments. An unterminated block comment stays
// where it is, for the caller to refuse.
func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		case '/':
			if d.strict || !d.comment() {
				return
			}
		default:
			return
		}
	}
}

// comment skips the comment at d.i, as Strip blanks it: a line comment
// through its line break or the end, a block comment through its */.
func (d *decoder) comment() bool {
	rest := d.s[d.i:]
	switch {
	case strings.HasPrefix(rest, "//"):
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			d.i += j + 1
		} else {
			d.i = len(d.s)
		}
		return true
	case strings.HasPrefix(rest, "/*"):
		if j := strings.Index(rest[2:], "*/"); j >= 0 {
			d.i += 2 + j + 2
			return true
		}
	}
	return false
}

func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.s) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return true, true
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return false, true
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return nil, true
	}
	return nil, false
}

func (d *decoder) object(depth int) (any, bool) {
	m := map[string]any{}
	ok := d.members('}', func() bool {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return false
		}
		k, ok := d.text()
		if !ok {
			return false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return false
		}
		d.i++
		d.space()
		if _, dup := m[k]; dup && d.strict {
			return false
		}
		v, ok := d.value(depth + 1)
		m[k] = v
		return ok
	})
	if !ok {
		return nil, false
	}
	return m, true
}

func (d *decoder) array(depth int) (any, bool) {
	// The elements gather on the stack; the array is made once, at its
	// size (a server's args are a few strings).
	var small [8]any
	a := small[:0]
	ok := d.members(']', func() bool {
		v, ok := d.value(depth + 1)
		a = append(a, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	return append(make([]any, 0, len(a)), a...), true
}

// members reads the comma-separated members of an object or array after
// its opening bracket, through end, one member at a time. A comma whose
// next token is the end is no comma, as Strip blanks it: [1,] and [,] read
// as [1] and [].
func (d *decoder) members(end byte, member func() bool) bool {
	d.i++ // { or [
	d.space()
	if d.ended(end) || !d.strict && d.trailingComma(end) {
		return true
	}
	for {
		d.space()
		if !member() {
			return false
		}
		d.space()
		if d.i >= len(d.s) {
			return false
		}
		switch d.s[d.i] {
		case ',':
			if !d.strict && d.trailingComma(end) {
				return true
			}
			d.i++
		case end:
			d.i++
			return true
		default:
			return false
		}
	}
}

// ended reads end if it is next.
func (d *decoder) ended(end byte) bool {
	if d.i < len(d.s) && d.s[d.i] == end {
		d.i++
		return true
	}
	return false
}

// trailingComma reads a comma and end, with whitespace and comments
// between, if they are next; otherwise it reads nothing.
func (d *decoder) trailingComma(end byte) bool {
	if d.i >= len(d.s) || d.s[d.i] != ',' {
		return false
	}
	at := d.i
	d.i++
	d.space()
	if d.ended(end) {
		return true
	}
	d.i = at
	return false
}

// str reads a string; the document is valid UTF-8 (DecodeUTF8), and
// escapes decode as encoding/json decodes them (a lone surrogate is
// U+FFFD).
func (d *decoder) str() (any, bool) {
	s, ok := d.text()
	return s, ok
}

// text is str without the interface (a key costs no allocation).
func (d *decoder) text() (string, bool) {
	d.i++ // "
	start := d.i
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			s := d.s[start:d.i]
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		default:
			d.i++
		}
	}
	return "", false
}

func (d *decoder) escaped(start int) (string, bool) {
	var b strings.Builder
	b.WriteString(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if strings.HasPrefix(d.s[d.i:], `\u`) {
					save := d.i
					d.i += 2
					if x, ok := d.hex4(); ok {
						r2 = x
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b.WriteRune(dec)
						continue
					}
					d.i = save
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	for _, c := range d.s[d.i : d.i+4] {
		if c == '+' || c == '-' || c == '_' {
			return 0, false
		}
	}
	d.i += 4
	return rune(n), true
}

// number reads JSON's number grammar and converts as numbers does: the
// nearest float64, or the json.Number written beyond its range.
func (d *decoder) number() (any, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i >= len(d.s) {
		return nil, false
	}
	if d.s[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange || d.strict {
			return nil, false // encoding/json refuses what float64 cannot hold
		}
		return json.Number(d.s[start:d.i]), true // as numbers keeps it
	}
	return f, true
}

// AppendString appends s quoted as encoding/json writes a string with HTML
// escaping off, for writers that skip reflection. A string of valid UTF-8
// with no control character, ", \, U+2028 or U+2029 is itself between
// quotes; any other is left to encoding/json (FuzzAppendString).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return appendEncoded(b, s)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			return appendEncoded(b, s)
		}
		i += n
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendEncoded(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
