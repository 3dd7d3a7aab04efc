package imports

import (
	"bytes"

	"github.com/pelletier/go-toml/v2"
)

// go-toml's check for a key defined twice looks a key up by scanning every
// key recorded after its table's, so a codex file of n [mcp_servers.NAME]
// tables decodes in time n²: 9 ms at 1,428 tables, 540 ms at 14,285
// (upstream: pelletier/go-toml pull request 1100). Such a file is decoded
// in parts instead, each part a run of whole tables, when that provably
// gives what decoding it whole gives; anything else is decoded whole.
const (
	tomlPartsFrom = 128 // server tables that make a file worth the parts
	tomlPartSize  = 64  // server tables a part
)

// unmarshalTOML is toml.Unmarshal into a map, in parts where that is the
// same (unmarshalTOMLInParts).
func unmarshalTOML(data []byte) (map[string]any, error) {
	if m, ok := unmarshalTOMLInParts(data, tomlPartsFrom, tomlPartSize); ok {
		return m, nil
	}
	var m map[string]any
	err := toml.Unmarshal(data, &m)
	return m, err
}

// unmarshalTOMLInParts decodes data as a head and runs of server tables
// (size tables a run, once there are from or more), each run on its own,
// and ok is true only when that is what decoding data
// whole gives (FuzzTOMLInParts). The conditions, each checked:
//
//   - Every line from the first "[mcp_servers.NAME]" header on that starts
//     with "[" is such a header (NAME a bare key, the header alone on its
//     line), each NAME once: the tables hold key/value lines only.
//   - The head and every run decode without error on their own. Each piece
//     begins where data's lexing is between expressions (the piece before
//     it is a whole document ending at a line's end), so a header found
//     inside a multi-line string leaves the piece before it unterminated,
//     which refuses.
//   - The head defines no mcp_servers, and each run decodes to exactly
//     {mcp_servers: {its NAMEs}} (which the first condition already
//     implies: a key/value line cannot reach outside its table; checked
//     again all the same).
//
// Under those, the tables are disjoint and nothing else shares a key with
// them, so the whole document is the head with mcp_servers set to their
// union. Anything else, and any error, is left to toml.Unmarshal of the
// whole, for its answer and its error's position.
func unmarshalTOMLInParts(data []byte, from, size int) (map[string]any, bool) {
	type table struct {
		name string
		at   int
	}
	var tables []table
	seen := map[string]bool{}
	for at := 0; at < len(data); {
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += at
		}
		line := data[at:end]
		if name, ok := serverHeader(line); ok {
			if seen[name] {
				return nil, false
			}
			seen[name] = true
			tables = append(tables, table{name, at})
		} else if len(tables) > 0 && bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("[")) {
			return nil, false
		}
		at = end + 1
	}
	if len(tables) < from || len(tables) == 0 {
		return nil, false
	}
	var top map[string]any
	if err := toml.Unmarshal(data[:tables[0].at], &top); err != nil {
		return nil, false
	}
	if _, ok := top["mcp_servers"]; ok {
		return nil, false
	}
	if top == nil {
		top = map[string]any{}
	}
	servers := make(map[string]any, len(tables))
	for i := 0; i < len(tables); i += size {
		j := min(i+size, len(tables))
		end := len(data)
		if j < len(tables) {
			end = tables[j].at
		}
		var part map[string]any
		if err := toml.Unmarshal(data[tables[i].at:end], &part); err != nil || len(part) != 1 {
			return nil, false
		}
		got, ok := part["mcp_servers"].(map[string]any)
		if !ok || len(got) != j-i {
			return nil, false
		}
		for _, t := range tables[i:j] {
			v, ok := got[t.name]
			if !ok {
				return nil, false
			}
			servers[t.name] = v
		}
	}
	top["mcp_servers"] = servers
	return top, true
}

// serverHeader reads a line that is "[mcp_servers.NAME]" and nothing else
// (spaces or tabs after it, the \r of a CRLF), NAME a bare key.
func serverHeader(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("[mcp_servers."))
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && bareKeyByte(rest[n]) {
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != ']' {
		return "", false
	}
	tail := bytes.TrimRight(bytes.TrimSuffix(rest[n+1:], []byte("\r")), " \t")
	if len(tail) > 0 {
		return "", false
	}
	return string(rest[:n]), true
}

func bareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
