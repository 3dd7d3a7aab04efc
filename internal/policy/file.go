package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/piagent/piagent/internal/nethosts"
)

// FileVersion is the only policy file version this build reads.
const FileVersion = 1

// File is a policy file as written on disk: the embedded base policy, the
// user's override and the project's override share this shape. Fields left
// out keep the value of the layer below.
type File struct {
	Version             int                 `json:"version"`
	Comment             string              `json:"comment,omitempty"`
	Mode                string              `json:"mode,omitempty"`
	PermissionProfile   string              `json:"permissionProfile,omitempty"`
	RegistryMode        string              `json:"registryMode,omitempty"`
	Sandbox             string              `json:"sandbox,omitempty"`
	ServerSandbox       string              `json:"serverSandbox,omitempty"`
	Network             string              `json:"network,omitempty"`
	AllowHosts          []string            `json:"allowHosts,omitempty"`
	PassEnv             []string            `json:"passEnv,omitempty"`
	FirstSight          string              `json:"firstSight,omitempty"`
	ProtectedPaths      []string            `json:"protectedPaths,omitempty"`
	ShellProtectedPaths []string            `json:"shellProtectedPaths,omitempty"`
	AllowReadPaths      []string            `json:"allowReadPaths,omitempty"`
	AlwaysAllowedTools  []string            `json:"alwaysAllowedTools,omitempty"`
	ToolCapabilities    map[string][]string `json:"toolCapabilities,omitempty"`
	ExecRules           []ExecRule          `json:"execRules,omitempty"`
	ExecRuleActions     map[string]string   `json:"execRuleActions,omitempty"`
	Remove              *Removal            `json:"remove,omitempty"`
}

// ExecRule is a shell rule a policy file adds: a command (by name, after
// wrappers are taken off) whose literal arguments include every one of Args,
// in order, gets Action.
type ExecRule struct {
	ID      string   `json:"id"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Action  string   `json:"action"` // "block" or "confirm"
	Reason  string   `json:"reason,omitempty"`
}

// Removal lists entries of lower layers that a file takes away. Only the
// user's own file may remove anything.
type Removal struct {
	ProtectedPaths      []string `json:"protectedPaths,omitempty"`
	ShellProtectedPaths []string `json:"shellProtectedPaths,omitempty"`
	ExecRules           []string `json:"execRules,omitempty"`
}

// Values of the enumerated fields.
const (
	RegistryAdvisory = "advisory"
	RegistryEnforce  = "enforce"

	ProfileStandard          = "standard"
	ProfileTrustedFullAccess = "trusted-full-access"

	// SandboxAuto runs the agent's commands under the OS sandbox where one
	// applies and with the command reader alone (said in the notice and
	// doctor) where none does; SandboxRequired blocks every bash call where
	// none applies.
	SandboxAuto     = "auto"
	SandboxRequired = "required"
	// SandboxNamespaces blocks every bash call where the full boundary
	// (user or root mount and PID namespaces) cannot be made, and sandbox
	// exec refuses to fall back to Landlock alone.
	SandboxNamespaces = "namespaces"

	// FirstSightShow (the default) pins a server's catalogue the first
	// time it is seen and shows it to the person; FirstSightAsk withholds
	// it from the model, and blocks its calls, until the person has looked
	// and accepted it (piagent-mcp approve NAME --tools).
	FirstSightShow = "show"
	FirstSightAsk  = "ask"

	// ServerSandboxOn (the default) runs every stdio server piagent pi
	// starts under piagent's server profile; ServerSandboxOff, from the
	// user's own file only, starts them unconfined (doctor warns).
	ServerSandboxOn  = "on"
	ServerSandboxOff = "off"

	// NetworkRegistries (the default) gives the agent's commands and the
	// servers the network through piagent's proxy alone: the package
	// registries and the hosts the person named (allowHosts, a server's
	// --net grants), with a loopback of their own; NetworkOn the host's
	// network, the machine's own loopback services included; NetworkOff
	// none: a network namespace with only its own loopback, or, where no
	// namespace can be made, no Internet sockets at all. A repository may
	// narrow it (on, registries, off), never widen it.
	NetworkOn         = "on"
	NetworkRegistries = "registries"
	NetworkOff        = "off"
)

// FileError says where a policy file stopped being a valid policy. Line and
// Column are 1-based (Column counts bytes); both are 0 when the whole file is
// at fault (unreadable, empty).
type FileError struct {
	File         string
	Line, Column int
	Msg          string
	Err          error // the underlying error, if any
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("policy file %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("policy file %s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

func (e *FileError) Unwrap() error { return e.Err }

// ErrInvalid is wrapped by every FileError about a file's content.
var ErrInvalid = errors.New("invalid policy file")

// schema lists the keys each object may hold, by path; "*" marks a map with
// free keys whose values follow the schema under the path with "*".
var schema = map[string][]string{
	"":                 {"version", "comment", "mode", "permissionProfile", "registryMode", "sandbox", "serverSandbox", "network", "allowHosts", "passEnv", "firstSight", "protectedPaths", "shellProtectedPaths", "allowReadPaths", "alwaysAllowedTools", "toolCapabilities", "execRules", "execRuleActions", "remove"},
	"toolCapabilities": {"*"},
	"execRuleActions":  {"*"},
	"execRules[]":      {"id", "command", "args", "action", "reason"},
	"remove":           {"protectedPaths", "shellProtectedPaths", "execRules"},
}

// ParseFile decodes a policy file strictly: JSON with comments and trailing
// commas, a version that this build knows, no unknown or duplicate keys, keys
// spelled with their exact case, and values that make sense. name is used in
// errors only.
func ParseFile(name string, data []byte) (*File, error) {
	ferr := func(off int, format string, args ...any) error {
		line, col := position(data, off)
		return &FileError{File: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...), Err: ErrInvalid}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FileError{File: name, Msg: `file is empty; a policy file starts with {"version": 1}`, Err: ErrInvalid}
	}
	// hujson's Standardize blanks comments in the bytes it parsed: a copy,
	// so that the embedded base policy, parsed by every Merge at once
	// (tests in parallel, a helper), is never written while read.
	v, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		line, col, msg := hujsonPosition(err)
		if line == 0 {
			return nil, ferr(len(data), "%s", err.Error())
		}
		return nil, &FileError{File: name, Line: line, Column: col, Msg: msg, Err: ErrInvalid}
	}
	v.Standardize()
	std := v.Pack() // byte offsets are kept, so positions refer to the original
	if err := checkKeys(std, ferr); err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, ferr(int(te.Offset), "field %s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return nil, ferr(int(dec.InputOffset()), "%s", err.Error())
	}
	if err := validate(&f, std, ferr); err != nil {
		return nil, err
	}
	return &f, nil
}

// checkKeys walks the document's tokens and rejects keys the schema does not
// list (compared case-sensitively), duplicate keys, a missing version and
// trailing data.
func checkKeys(data []byte, ferr func(int, string, ...any) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return ferr(int(dec.InputOffset()), "%s", err.Error())
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return ferr(0, "a policy file is a JSON object")
	}
	sawVersion := false
	var walk func(path string, top bool) error
	walk = func(path string, top bool) error {
		// An object's opening brace has been read.
		seen := map[string]bool{}
		allowed := schema[path]
		free := len(allowed) == 1 && allowed[0] == "*"
		for dec.More() {
			off := int(dec.InputOffset())
			kt, err := dec.Token()
			if err != nil {
				return ferr(int(dec.InputOffset()), "%s", err.Error())
			}
			key := kt.(string)
			off = skipToKey(data, off)
			if seen[key] {
				return ferr(off, "duplicate key %q", key)
			}
			seen[key] = true
			if !free && allowed != nil && !slices.Contains(allowed, key) {
				hint := ""
				for _, a := range allowed {
					if strings.EqualFold(a, key) {
						hint = fmt.Sprintf(" (did you mean %q? keys are case-sensitive)", a)
					}
				}
				where := "policy"
				if path != "" {
					where = path
				}
				return ferr(off, "unknown key %q in %s%s", key, where, hint)
			}
			if top && key == "version" {
				sawVersion = true
			}
			child := key
			if path != "" {
				child = path + "." + key
			}
			if free {
				child = path + ".*"
			}
			if err := walkValue(dec, child, walk, ferr); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // closing brace
			return ferr(int(dec.InputOffset()), "%s", err.Error())
		}
		return nil
	}
	if err := walk("", true); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ferr(int(dec.InputOffset()), "data after the policy object")
	}
	if !sawVersion {
		return ferr(0, `"version" is required (this build reads version %d)`, FileVersion)
	}
	return nil
}

func walkValue(dec *json.Decoder, path string, walk func(string, bool) error, ferr func(int, string, ...any) error) error {
	tok, err := dec.Token()
	if err != nil {
		return ferr(int(dec.InputOffset()), "%s", err.Error())
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		return walk(path, false)
	case '[':
		for dec.More() {
			if err := walkValue(dec, path+"[]", walk, ferr); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return ferr(int(dec.InputOffset()), "%s", err.Error())
		}
	}
	return nil
}

// skipToKey moves an offset taken before a key token past separators to the
// key's opening quote.
func skipToKey(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// keyOffset finds where a top-level key is written, for errors about its
// value; 0 when it cannot tell.
func keyOffset(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return i
}

func validate(f *File, data []byte, ferr func(int, string, ...any) error) error {
	if f.Version != FileVersion {
		return ferr(keyOffset(data, "version"), "version %d is not supported (this build reads version %d)", f.Version, FileVersion)
	}
	if f.Mode != "" && modeRank(f.Mode) < 0 {
		return ferr(keyOffset(data, "mode"), "mode %q is not one of %s", f.Mode, strings.Join(Modes, ", "))
	}
	switch f.PermissionProfile {
	case "", ProfileStandard, ProfileTrustedFullAccess:
	default:
		return ferr(keyOffset(data, "permissionProfile"), "permissionProfile %q is not %q or %q", f.PermissionProfile, ProfileStandard, ProfileTrustedFullAccess)
	}
	switch f.ServerSandbox {
	case "", ServerSandboxOn, ServerSandboxOff:
	default:
		return ferr(keyOffset(data, "serverSandbox"), "serverSandbox %q is not %q or %q", f.ServerSandbox, ServerSandboxOn, ServerSandboxOff)
	}
	switch f.Sandbox {
	case "", SandboxAuto, SandboxRequired, SandboxNamespaces:
	default:
		return ferr(keyOffset(data, "sandbox"), "sandbox %q is not %q, %q or %q", f.Sandbox, SandboxAuto, SandboxRequired, SandboxNamespaces)
	}
	switch f.Network {
	case "", NetworkOn, NetworkRegistries, NetworkOff:
	default:
		return ferr(keyOffset(data, "network"), "network %q is not %q, %q or %q", f.Network, NetworkOn, NetworkRegistries, NetworkOff)
	}
	for _, h := range f.AllowHosts {
		if err := validHost(h); err != nil {
			return ferr(keyOffset(data, "allowHosts"), "allowHosts: %v", err)
		}
	}
	switch f.FirstSight {
	case "", FirstSightShow, FirstSightAsk:
	default:
		return ferr(keyOffset(data, "firstSight"), "firstSight %q is not %q or %q", f.FirstSight, FirstSightShow, FirstSightAsk)
	}
	switch f.RegistryMode {
	case "", RegistryAdvisory, RegistryEnforce:
	default:
		return ferr(keyOffset(data, "registryMode"), "registryMode %q is not %q or %q", f.RegistryMode, RegistryAdvisory, RegistryEnforce)
	}
	lists := []struct {
		field string
		vals  []string
	}{
		{"protectedPaths", f.ProtectedPaths},
		{"shellProtectedPaths", f.ShellProtectedPaths},
		{"allowReadPaths", f.AllowReadPaths},
	}
	if f.Remove != nil {
		lists = append(lists,
			struct {
				field string
				vals  []string
			}{"remove.protectedPaths", f.Remove.ProtectedPaths},
			struct {
				field string
				vals  []string
			}{"remove.shellProtectedPaths", f.Remove.ShellProtectedPaths})
	}
	for _, l := range lists {
		for _, p := range l.vals {
			if _, err := compileGlobs(p); err != nil {
				return ferr(valueOffset(data, p), "%s: %v", l.field, err)
			}
		}
	}
	for _, t := range f.AlwaysAllowedTools {
		if strings.TrimSpace(t) == "" {
			return ferr(keyOffset(data, "alwaysAllowedTools"), "alwaysAllowedTools: empty tool name")
		}
	}
	for t, caps := range f.ToolCapabilities {
		if strings.TrimSpace(t) == "" {
			return ferr(keyOffset(data, "toolCapabilities"), "toolCapabilities: empty tool name")
		}
		for _, c := range caps {
			if strings.TrimSpace(c) == "" {
				return ferr(valueOffset(data, t), "toolCapabilities.%s: empty capability", t)
			}
		}
	}
	ids := map[string]bool{}
	for i, r := range f.ExecRules {
		off := valueOffset(data, r.ID)
		if r.ID == "" {
			return ferr(keyOffset(data, "execRules"), "execRules[%d]: id is required", i)
		}
		if ids[r.ID] {
			return ferr(off, "execRules[%d]: duplicate id %q", i, r.ID)
		}
		ids[r.ID] = true
		if strings.TrimSpace(r.Command) == "" {
			return ferr(off, "execRules[%d] (%s): command is required", i, r.ID)
		}
		if r.Action != ActionBlock && r.Action != ActionConfirm {
			return ferr(off, "execRules[%d] (%s): action %q is not %q or %q", i, r.ID, r.Action, ActionBlock, ActionConfirm)
		}
	}
	for id, a := range f.ExecRuleActions {
		switch a {
		case ActionBlock, ActionConfirm, ActionAllow:
		default:
			return ferr(valueOffset(data, id), "execRuleActions.%s: action %q is not %q, %q or %q", id, a, ActionBlock, ActionConfirm, ActionAllow)
		}
	}
	return nil
}

// valueOffset finds where a string is written, for errors about it.
func valueOffset(data []byte, s string) int {
	b, _ := json.Marshal(s)
	i := bytes.Index(data, b)
	if i < 0 {
		return 0
	}
	return i
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func hujsonPosition(err error) (line, col int, msg string) {
	s := err.Error()
	s = strings.TrimPrefix(s, "hujson: ")
	var l, c int
	if n, _ := fmt.Sscanf(s, "line %d, column %d:", &l, &c); n == 2 {
		if i := strings.Index(s, ": "); i >= 0 {
			return l, c, s[i+2:]
		}
		return l, c, s
	}
	return 0, 0, s
}

// validHost checks one allowHosts entry: HOST, HOST:PORT, *.DOMAIN[:PORT],
// or a loopback address with its port.
func validHost(h string) error {
	_, err := nethosts.ParseEntry(h)
	return err
}
