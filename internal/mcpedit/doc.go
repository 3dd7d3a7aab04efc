// Package mcpedit edits piagent's own MCP config layer files (the shared
// global ~/.config/mcp/mcp.json, the Pi global <agentDir>/mcp.json, the
// project .mcp.json and the Pi project .pi/mcp.json) one server at a time.
//
// A Doc is one parsed file. Its edits touch only the member they change:
// comments, key order, the server map's spelling (`mcpServers`, or an
// existing `mcp-servers`), indentation and every other server survive byte
// for byte as far as the hujson syntax tree carries them. Where JSON.parse
// would take the last of duplicate keys, so does every Doc method.
//
// Update is the file edge: it reads a file under a lock, applies an edit and
// replaces the file atomically, and never overwrites a file it cannot parse.
package mcpedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"github.com/piagent/piagent/internal/jsonc"
)

// ErrInvalid is wrapped by every *FileError: the file is not one a layer
// edit may touch.
var ErrInvalid = errors.New("invalid mcp config file")

// FileError says why a file cannot be edited, and where when the syntax is
// broken. Line and Column are 1-based; 0 when unknown.
type FileError struct {
	Path         string
	Line, Column int
	Msg          string
}

func (e *FileError) Error() string {
	switch {
	case e.Path != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Msg)
	case e.Path != "":
		return e.Path + ": " + e.Msg
	case e.Line > 0:
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FileError) Is(target error) bool { return target == ErrInvalid }

// Server map keys, in the order the adapter looks for them.
const (
	KeyServers      = "mcpServers"
	KeyServersAlias = "mcp-servers"
	keySettings     = "settings"
	keyDisabled     = "disabled"
	keyEnabled      = "enabled" // Pi's built-in MCP client's switch
)

// Doc is one config file being edited. The zero Doc is not usable; use Parse.
type Doc struct {
	path string
	root hujson.Value
	unit string // one level of indentation
}

// Parse reads data, the contents of the file at path (path only names the
// file in errors). Empty data, or data holding only whitespace and comments,
// is an empty document; its comments are kept above the new object. A file
// that is not JSONC, whose top level is not an object, or whose server map
// or settings is not an object is refused with a *FileError.
func Parse(path string, data []byte) (*Doc, error) {
	d := &Doc{path: path, unit: "  "}
	if jsonc.IsBlank(data) {
		d.root = hujson.Value{Value: &hujson.Object{}, AfterExtra: hujson.Extra("\n")}
		if lead := bytes.TrimRight(data, " \t\r\n"); len(lead) > 0 {
			d.root.BeforeExtra = append(append(hujson.Extra{}, lead...), '\n')
			if _, err := hujson.Parse(d.Bytes()); err != nil {
				return nil, &FileError{Path: path, Msg: "holds only comments, and they are not valid JSONC: " + err.Error()}
			}
		}
		return d, nil
	}
	// jsonc.Parse blanks the comments of the slice it is given.
	if _, _, err := jsonc.Parse(bytes.Clone(data)); err != nil {
		var se *jsonc.SyntaxError
		if errors.As(err, &se) {
			return nil, &FileError{Path: path, Line: se.Line, Column: se.Column, Msg: "not valid JSONC: " + se.Msg}
		}
		return nil, &FileError{Path: path, Msg: "not valid JSONC: " + err.Error()}
	}
	v, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		return nil, &FileError{Path: path, Msg: "not valid JSONC: " + err.Error()}
	}
	d.root = v
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, d.errAt(&v, "the top level is not an object")
	}
	if key, m := d.serversMember(); m != nil {
		if _, ok := m.Value.Value.(*hujson.Object); !ok && !isNull(m.Value) {
			return nil, d.errAt(&m.Value, key+" is not an object")
		}
	}
	if i := lastMember(root, keySettings); i >= 0 {
		if _, ok := root.Members[i].Value.Value.(*hujson.Object); !ok {
			return nil, d.errAt(&root.Members[i].Value, "settings is not an object")
		}
	}
	d.unit = detectUnit(root)
	return d, nil
}

func (d *Doc) errAt(v *hujson.Value, msg string) *FileError {
	line, col := position(d.root.Pack(), v.StartOffset)
	return &FileError{Path: d.path, Line: line, Column: col, Msg: msg}
}

// position turns a byte offset into a 1-based line and byte column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	return line, off - bytes.LastIndexByte(data[:off], '\n')
}

// Bytes is the document as it now reads.
func (d *Doc) Bytes() []byte { return d.root.Pack() }

func (d *Doc) object() *hujson.Object { return d.root.Value.(*hujson.Object) }

// serversMember finds the server map the adapter reads: `mcpServers` unless
// it is missing or null, then `mcp-servers`. It returns the key and the
// member, or "" and nil when neither is set to a value.
func (d *Doc) serversMember() (string, *hujson.ObjectMember) {
	root := d.object()
	var nullKey string
	var nullMember *hujson.ObjectMember
	for _, key := range []string{KeyServers, KeyServersAlias} {
		if i := lastMember(root, key); i >= 0 {
			m := &root.Members[i]
			if !isNull(m.Value) {
				return key, m
			}
			if nullMember == nil {
				nullKey, nullMember = key, m
			}
		}
	}
	return nullKey, nullMember
}

// servers returns the server map, creating it (as `mcpServers`, or in place
// of a null map) when create is set.
func (d *Doc) servers(create bool) *hujson.Object {
	_, m := d.serversMember()
	if m != nil {
		if obj, ok := m.Value.Value.(*hujson.Object); ok {
			return obj
		}
		if !create {
			return nil
		}
		obj := &hujson.Object{}
		m.Value.Value = obj
		return obj
	}
	if !create {
		return nil
	}
	obj := &hujson.Object{}
	d.insertMember(d.object(), KeyServers, obj, d.memberIndent(d.object(), ""), "")
	return obj
}

// Has reports whether the file defines the server.
func (d *Doc) Has(name string) bool {
	obj := d.servers(false)
	return obj != nil && lastMember(obj, name) >= 0
}

// Entry decodes the server's definition as JSON.parse would. ok is false
// when the file does not define it; entry is nil when the value is not an
// object (the adapter drops such entries).
func (d *Doc) Entry(name string) (entry map[string]any, ok bool) {
	obj := d.servers(false)
	if obj == nil {
		return nil, false
	}
	i := lastMember(obj, name)
	if i < 0 {
		return nil, false
	}
	v := decode(obj.Members[i].Value)
	entry, _ = v.(map[string]any)
	return entry, true
}

// SetServer adds the server, or replaces its definition in place, with
// entry, a JSON object. Earlier duplicate members of that name are removed.
// A new member goes at the end of the server map; the definition is laid out
// with the file's indentation, in entry's key order.
func (d *Doc) SetServer(name string, entry []byte) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("server name %q is not valid UTF-8", name)
	}
	obj := d.servers(true)
	ind := d.memberIndent(obj, d.serversIndent())
	value, err := d.formatValue(entry, ind, inlineObject(obj))
	if err != nil {
		return err
	}
	if _, ok := value.(*hujson.Object); !ok {
		return fmt.Errorf("server %q: the definition is not a JSON object", name)
	}
	d.removeDuplicates(obj, name)
	if i := lastMember(obj, name); i >= 0 {
		obj.Members[i].Value.Value = value
		return nil
	}
	d.insertMember(obj, name, value, ind, d.serversIndent())
	return nil
}

// RemoveServer deletes every member of that name from the server map and
// reports whether there was one.
func (d *Doc) RemoveServer(name string) bool {
	obj := d.servers(false)
	if obj == nil {
		return false
	}
	found := false
	for i := lastMember(obj, name); i >= 0; i = lastMember(obj, name) {
		removeMember(obj, i)
		found = true
	}
	return found
}

// SetDisabled writes `"disabled": value` into the server's entry, adding an
// entry that holds only that key when the file has none (an override, as the
// adapter's own /mcp disable writes). It refuses an entry that is not an
// object.
func (d *Doc) SetDisabled(name string, value bool) error {
	obj := d.servers(true)
	i := lastMember(obj, name)
	if i < 0 {
		return d.SetServer(name, fmt.Appendf(nil, `{%q: %t, %q: %t}`, keyDisabled, value, keyEnabled, !value))
	}
	entry, ok := obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return d.errAt(&obj.Members[i].Value, fmt.Sprintf("server %q is not an object", name))
	}
	ind := d.memberIndent(obj, d.serversIndent())
	// The adapter reads disabled, Pi's built-in client enabled: say it in
	// both dialects.
	for _, kv := range []struct {
		key string
		val bool
	}{{keyDisabled, value}, {keyEnabled, !value}} {
		d.removeDuplicates(entry, kv.key)
		if j := lastMember(entry, kv.key); j >= 0 {
			entry.Members[j].Value.Value = hujson.Bool(kv.val)
			continue
		}
		d.insertMember(entry, kv.key, hujson.Bool(kv.val), d.memberIndent(entry, ind), ind)
	}
	return nil
}

// ClearDisabled deletes the `disabled` key from the server's entry, and the
// entry itself when nothing else is left in it (the override /mcp disable
// wrote). It reports whether anything changed.
func (d *Doc) ClearDisabled(name string) (bool, error) {
	obj := d.servers(false)
	if obj == nil {
		return false, nil
	}
	i := lastMember(obj, name)
	if i < 0 {
		return false, nil
	}
	entry, ok := obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return false, d.errAt(&obj.Members[i].Value, fmt.Sprintf("server %q is not an object", name))
	}
	changed := false
	for _, key := range []string{keyDisabled, keyEnabled} {
		for j := lastMember(entry, key); j >= 0; j = lastMember(entry, key) {
			removeMember(entry, j)
			changed = true
		}
	}
	if changed && len(entry.Members) == 0 && !hasComment(entry.AfterExtra) {
		d.RemoveServer(name)
	}
	return changed, nil
}

// SetSettingDefault writes settings[key] = value (JSON) only when the file's
// settings do not set key. It reports whether it wrote.
func (d *Doc) SetSettingDefault(key string, value []byte) (bool, error) {
	root := d.object()
	rootInd := d.memberIndent(root, "")
	i := lastMember(root, keySettings)
	if i < 0 {
		k, _ := json.Marshal(key)
		v, err := d.formatValue(fmt.Appendf(nil, "{%s: %s}", k, value), rootInd, inlineObject(root))
		if err != nil {
			return false, err
		}
		d.insertMember(root, keySettings, v, rootInd, "")
		return true, nil
	}
	settings := root.Members[i].Value.Value.(*hujson.Object) // checked by Parse
	if lastMember(settings, key) >= 0 {
		return false, nil
	}
	ind := d.memberIndent(settings, rootInd)
	v, err := d.formatValue(value, ind, inlineObject(settings))
	if err != nil {
		return false, err
	}
	d.insertMember(settings, key, v, ind, rootInd)
	return true, nil
}

// serversIndent is the indentation of the server map's own line.
func (d *Doc) serversIndent() string {
	return d.memberIndent(d.object(), "")
}

// memberIndent is the indentation of obj's members: what its last member is
// indented by when it starts a line, else outer plus one level.
func (d *Doc) memberIndent(obj *hujson.Object, outer string) string {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if ind, ok := lineIndent(obj.Members[i].Name.BeforeExtra); ok {
			return ind
		}
	}
	return outer + d.unit
}

// lineIndent returns the whitespace after the last newline of an Extra, if
// only whitespace follows it.
func lineIndent(b hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return "", false
	}
	tail := b[i+1:]
	if len(bytes.Trim(tail, " \t")) != 0 {
		return "", false
	}
	return string(tail), true
}

// detectUnit guesses one indentation level from the first top-level member
// that starts a line; two spaces when none does.
func detectUnit(root *hujson.Object) string {
	for _, m := range root.Members {
		if ind, ok := lineIndent(m.Name.BeforeExtra); ok && ind != "" {
			if ind[0] == '\t' {
				return "\t"
			}
			return ind
		}
	}
	return "  "
}

// insertMember appends name: value to obj. ind indents the new member;
// closing indents obj's closing brace when obj was empty or on one line.
// A comment on the old last member's line stays with that member, after the
// comma this adds; comments before the closing brace stay there.
func (d *Doc) insertMember(obj *hujson.Object, name string, value hujson.ValueTrimmed, ind, closing string) {
	m := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: value},
	}
	if len(obj.Members) == 0 {
		lead := bytes.TrimRight(obj.AfterExtra, " \t\r\n")
		m.Name.BeforeExtra = hujson.Extra(string(lead) + "\n" + ind)
		obj.AfterExtra = hujson.Extra("\n" + closing)
	} else if inlineObject(obj) {
		last := &obj.Members[len(obj.Members)-1]
		m.Name.BeforeExtra = append(hujson.Extra{}, last.Name.BeforeExtra...)
		if len(m.Name.BeforeExtra) == 0 {
			m.Name.BeforeExtra = hujson.Extra(" ")
		}
		if last.Value.AfterExtra != nil {
			m.Value.AfterExtra = hujson.Extra{}
		}
	} else {
		last := &obj.Members[len(obj.Members)-1]
		same, rest := splitSameLine(obj.AfterExtra)
		m.Name.BeforeExtra = hujson.Extra(string(same) + "\n" + ind)
		if !bytes.Contains(rest, []byte("\n")) {
			rest = append(bytes.TrimRight(rest, " \t"), "\n"+closing...)
		}
		obj.AfterExtra = rest
		if last.Value.AfterExtra != nil {
			m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
		}
	}
	obj.Members = append(obj.Members, m)
}

// inlineObject reports an object written on one line without comments:
// {"a": 1, "b": 2}.
func inlineObject(obj *hujson.Object) bool {
	for _, m := range obj.Members {
		if bytes.ContainsAny(m.Name.BeforeExtra, "\n/") || bytes.ContainsAny(m.Value.AfterExtra, "\n/") {
			return false
		}
	}
	return len(obj.Members) > 0 && !bytes.ContainsAny(obj.AfterExtra, "\n/")
}

// removeMember deletes member i with its leading comment lines and any
// comment on its own line, keeping a comment that belongs to the previous
// member's line.
func removeMember(obj *hujson.Object, i int) {
	n := len(obj.Members)
	keep, _ := splitSameLine(obj.Members[i].Name.BeforeExtra)
	next := &obj.AfterExtra
	if i+1 < n {
		next = &obj.Members[i+1].Name.BeforeExtra
	}
	_, rest := splitSameLine(*next)
	if b := obj.Members[i].Name.BeforeExtra; i+1 < n && !bytes.ContainsAny(b, "\n/") && !bytes.ContainsAny(rest, "\n/") {
		rest = append(hujson.Extra{}, b...) // one line: the next member takes this one's spacing
	}
	joined := append(hujson.Extra{}, keep...)
	if hasLineComment(keep) && !bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r"), []byte("\n")) {
		joined = append(joined, '\n')
	}
	*next = append(joined, rest...)
	if i == n-1 && n > 1 && obj.Members[i].Value.AfterExtra != nil && obj.Members[i-1].Value.AfterExtra == nil {
		obj.Members[i-1].Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if len(obj.Members) == 0 && !hasComment(obj.AfterExtra) {
		obj.AfterExtra = nil
	}
}

func (d *Doc) removeDuplicates(obj *hujson.Object, name string) {
	last := lastMember(obj, name)
	for i := last - 1; i >= 0; i-- {
		if memberName(obj.Members[i]) == name {
			removeMember(obj, i)
		}
	}
}

// splitSameLine splits an Extra at its first newline outside a block
// comment. same is the part before it when that part holds a comment (it
// belongs to what precedes the Extra); otherwise same is nil and rest is b.
func splitSameLine(b hujson.Extra) (same, rest hujson.Extra) {
	cut := len(b)
scan:
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\n':
			cut = i
			break scan
		case bytes.HasPrefix(b[i:], []byte("//")):
			if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
				cut = i + j
			}
			break scan
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				break scan
			}
			i += j + 4
		default:
			i++
		}
	}
	if !hasComment(b[:cut]) {
		return nil, b
	}
	return append(hujson.Extra{}, b[:cut]...), append(hujson.Extra{}, b[cut:]...)
}

func hasComment(b []byte) bool {
	return bytes.Contains(b, []byte("//")) || bytes.Contains(b, []byte("/*"))
}

// hasLineComment reports whether b ends inside a // comment, so what follows
// must start on a new line.
func hasLineComment(b []byte) bool {
	for i := 0; i < len(b); {
		switch {
		case bytes.HasPrefix(b[i:], []byte("//")):
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return true
			}
			i += j + 1
		case bytes.HasPrefix(b[i:], []byte("/*")):
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return false
			}
			i += j + 4
		default:
			i++
		}
	}
	return false
}

// lastMember is the index of the last member called name, or -1.
func lastMember(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if memberName(obj.Members[i]) == name {
			return i
		}
	}
	return -1
}

func memberName(m hujson.ObjectMember) string {
	lit, ok := m.Name.Value.(hujson.Literal)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return string(lit)
	}
	return s
}

func isNull(v hujson.Value) bool {
	lit, ok := v.Value.(hujson.Literal)
	return ok && string(lit) == "null"
}

// decode turns a syntax tree into what JSON.parse gives.
func decode(v hujson.Value) any {
	c := v.Clone()
	c.Standardize()
	var out any
	if json.Unmarshal(c.Pack(), &out) != nil {
		return nil
	}
	return out
}

// formatValue lays out a JSON value for a member indented by ind: objects
// one member a line, arrays of scalars on one line when they fit in 80
// columns, keys in the order written; all on one line when inline is set
// (the value joins an object written on one line).
func (d *Doc) formatValue(raw []byte, ind string, inline bool) (hujson.ValueTrimmed, error) {
	v, err := hujson.Parse(bytes.Clone(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid JSON value: %w", err)
	}
	v.Standardize()
	var b strings.Builder
	if inline {
		layoutInline(&b, v.Value)
	} else {
		d.layout(&b, v.Value, ind, len(ind))
	}
	out, err := hujson.Parse([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("invalid JSON value: %w", err)
	}
	return out.Value, nil
}

func (d *Doc) layout(b *strings.Builder, v hujson.ValueTrimmed, ind string, col int) {
	switch x := v.(type) {
	case hujson.Literal:
		b.Write(x)
	case *hujson.Object:
		if len(x.Members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(",")
			}
			inner := ind + d.unit
			b.WriteString("\n" + inner)
			name := m.Name.Value.(hujson.Literal)
			b.Write(name)
			b.WriteString(": ")
			d.layout(b, m.Value.Value, inner, len(inner)+len(name)+2)
		}
		b.WriteString("\n" + ind + "}")
	case *hujson.Array:
		if len(x.Elements) == 0 {
			b.WriteString("[]")
			return
		}
		if inline, ok := inlineArray(x); ok && col+len(inline) <= 80 {
			b.WriteString(inline)
			return
		}
		b.WriteString("[")
		for i, e := range x.Elements {
			if i > 0 {
				b.WriteString(",")
			}
			inner := ind + d.unit
			b.WriteString("\n" + inner)
			d.layout(b, e.Value, inner, len(inner))
		}
		b.WriteString("\n" + ind + "]")
	}
}

func layoutInline(b *strings.Builder, v hujson.ValueTrimmed) {
	switch x := v.(type) {
	case hujson.Literal:
		b.Write(x)
	case *hujson.Object:
		b.WriteString("{")
		for i, m := range x.Members {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(m.Name.Value.(hujson.Literal))
			b.WriteString(": ")
			layoutInline(b, m.Value.Value)
		}
		b.WriteString("}")
	case *hujson.Array:
		b.WriteString("[")
		for i, e := range x.Elements {
			if i > 0 {
				b.WriteString(", ")
			}
			layoutInline(b, e.Value)
		}
		b.WriteString("]")
	}
}

// inlineArray renders an array of scalars on one line.
func inlineArray(a *hujson.Array) (string, bool) {
	parts := make([]string, len(a.Elements))
	for i, e := range a.Elements {
		lit, ok := e.Value.(hujson.Literal)
		if !ok {
			return "", false
		}
		parts[i] = string(lit)
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}
