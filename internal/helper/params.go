package helper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// kind is the JSON type a member of params must have.
type kind int

const (
	kString  kind = iota
	kObject       // a JSON object
	kStrings      // an array of strings
	kObjects      // an array of objects
	kContent      // a string, or an array of objects (a tool result's parts)
)

func (k kind) String() string {
	return [...]string{"a string", "an object", "an array of strings", "an array of objects", "a string or an array of parts"}[k]
}

// member is one member of a method's params.
type member struct {
	name     string
	kind     kind
	required bool
}

// shapes is the protocol's params, per method, as docs/helper-protocol.md
// gives them. A request whose params do not match its method's shape is
// answered bad-params before the engine sees it: a member missing, null,
// of another type or unknown is never read as an empty value, so a
// malformed request cannot become an allow.
var shapes = map[string][]member{
	"ping":   nil,
	"state":  nil,
	"decide": {{"toolName", kString, true}, {"input", kObject, true}, {"sourcePath", kString, false}},
	"check":  {{"toolName", kString, true}, {"input", kObject, true}, {"sourcePath", kString, false}},
	"mode":   {{"set", kString, false}},
	// origin is what the adapter says started the call (the extension
	// passes it on; the answer does not depend on it).
	"broker": {{"serverName", kString, true}, {"originalToolName", kString, false}, {"origin", kString, false}},
	"redact": {{"toolName", kString, true}, {"input", kObject, true}, {"content", kContent, true}},
	"host":   {{"argv", kStrings, true}},
	"report": {{"tools", kObjects, true}},
}

// checkParams reports, as a bad-params error, how params differ from
// method's shape. Params may be absent or null only when the method has no
// required member. An unknown method passes (dispatch answers it).
func checkParams(method string, params json.RawMessage) error {
	shape, known := shapes[method]
	if !known {
		return nil
	}
	raw := bytes.TrimSpace(params)
	if len(raw) == 0 || string(raw) == "null" {
		for _, m := range shape {
			if m.required {
				return badParams(fmt.Errorf("params must be an object with %s", m.name))
			}
		}
		return nil
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return badParams(errors.New("params must be a JSON object"))
	}
	for name, v := range obj {
		i := slices.IndexFunc(shape, func(m member) bool { return m.name == name })
		if i < 0 {
			return badParams(fmt.Errorf("unknown member %q in %s's params", name, method))
		}
		if !shape[i].kind.holds(v) {
			return badParams(fmt.Errorf("%s must be %s", name, shape[i].kind))
		}
	}
	for _, m := range shape {
		if _, ok := obj[m.name]; m.required && !ok {
			return badParams(fmt.Errorf("%s is required", m.name))
		}
	}
	return nil
}

// holds reports whether v, a valid JSON value, is of kind k.
func (k kind) holds(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return false
	}
	switch k {
	case kString:
		return v[0] == '"'
	case kObject:
		return v[0] == '{'
	case kContent:
		return v[0] == '"' || kObjects.holds(v)
	}
	var elems []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &elems) != nil {
		return false
	}
	for _, e := range elems {
		want := kString
		if k == kObjects {
			want = kObject
		}
		if !want.holds(e) {
			return false
		}
	}
	return true
}

// nonEmpty is a bad-params error for a required string that is empty.
func nonEmpty(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return badParams(fmt.Errorf("%s must not be empty", name))
	}
	return nil
}
