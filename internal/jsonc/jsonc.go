// Package jsonc reads JSON with comments and trailing commas the way
// pi-mcp-adapter does (strip-json-comments with trailingCommas, then
// JSON.parse), and reports where a document is broken.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/tailscale/hujson"
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

// Parse decodes data. Blank reports a document that holds nothing but
// whitespace and comments, which the adapter treats as an absent file; value is
// nil then. Numbers decode as float64, as JavaScript holds them.
func Parse(data []byte) (value any, blank bool, err error) {
	if IsBlank(data) {
		return nil, true, nil
	}
	// hujson standardizes in place over the bytes it parsed; work on a copy
	// so the caller's data keeps its comments.
	v, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		return nil, false, syntaxError(data, err)
	}
	v.Standardize()
	std := v.Pack() // Standardize keeps every byte offset, so positions carry over.
	if err := json.Unmarshal(std, &value); err != nil {
		return nil, false, syntaxError(std, err)
	}
	return value, false, nil
}

// IsBlank reports whether data holds only whitespace and comments.
func IsBlank(data []byte) bool {
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				return true
			}
			i += j + 1
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			j := bytes.Index(data[i+2:], []byte("*/"))
			if j < 0 {
				return false
			}
			i += j + 4
		default:
			return false
		}
	}
	return true
}

var hujsonPos = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

func syntaxError(data []byte, err error) *SyntaxError {
	msg := err.Error()
	if m := hujsonPos.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		return &SyntaxError{Line: line, Column: col, Msg: m[3]}
	}
	off := len(data)
	var se *json.SyntaxError
	if errors.As(err, &se) && int(se.Offset) <= len(data) {
		off = max(int(se.Offset)-1, 0)
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}
