// Package approval is the decision store: which repository servers a person
// approved or rejected, per project, pinned to a digest. It lives outside
// every repository, at ~/.pi/piagent-mcp-approvals.json (the caller passes
// the path), in the TypeScript piagent's format plus "files" and "definition"
// (the repository-owned fragment as approved, secrets masked, so that a
// later re-approval can show what changed):
//
//	{
//	  "schemaVersion": 1,
//	  "projects": {
//	    "<project key>": {
//	      "<server name>": {
//	        "decision": "approved" | "rejected",
//	        "digest": "sha256:<hex>",
//	        "decidedAt": "<RFC 3339>",
//	        "files": {"<project-relative path>": "sha256:<hex>"},
//	        "definition": {…},
//	        "off": true
//	      }
//	    }
//	  }
//	}
//
// Stores move both ways between the two tools, so members this version does
// not know, at the top, in a project and in a decision, are kept as they are
// (same JSON value) when the file is rewritten, and never a reason to refuse
// it. In a project, a member whose value is an object is a server decision;
// a member with any other value is such an unknown member, kept and never a
// decision. Everything else is read strictly: invalid JSON or UTF-8, a known
// field of the wrong type (null included), or a schemaVersion other than 1
// make the store corrupt (*CorruptError). An empty file is corrupt too. The
// values of known fields are not judged here: a "decision" other than
// "approved", or a digest that does not match, simply does not approve.
// Duplicate keys resolve as JSON.parse resolves them, the last one wins.
//
// A store that exists but cannot be read or parsed, is larger than MaxSize or
// is not a regular file is an error from Load, and Update refuses to write
// over it, so a person's decisions are never silently lost. A missing file is
// an empty store. A symbolic link to a regular file is followed, for reading
// and for writing: the new content replaces the link's target (written
// beside it and renamed onto it), so a store kept in a dotfiles repository
// stays linked. A dangling link reads as a missing file, and a write replaces
// it with a regular file.
//
// Update runs read-modify-write under an exclusive lock on the sibling file
// "<path>.lock" (the store itself cannot be the lock: the atomic rename
// replaces its inode, and a waiter holding the old inode would read stale
// data). The new content goes to a temporary file in the same folder, is
// synced and renamed over the store, mode 0600; the folder is created 0700
// when missing.
package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
)

// SchemaVersion is the only store version this package reads and writes.
const SchemaVersion = 1

// MaxSize is the largest store Load accepts, in bytes.
const MaxSize = 4 << 20

// Decision values.
const (
	Approved = "approved"
	Rejected = "rejected"
)

// Errors Load and Update return, wrapped with the store's path.
var (
	ErrTooLarge   = errors.New("approval store is larger than 4 MiB")
	ErrNotRegular = errors.New("approval store is not a regular file")
)

// CorruptError is a store that exists but cannot be parsed. Line and Column
// (1-based) locate syntax and encoding errors; they are 0 for a value of the
// wrong type, which Err then names by its place in the document.
type CorruptError struct {
	Path         string
	Line, Column int
	Err          error
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("approval store %s:%d:%d: %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("approval store %s: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Decision is one server's recorded decision. Get returns it with the
// members this version does not know, and Set writes them back, so
// Get-modify-Set keeps them; a Decision built from scratch has none.
type Decision struct {
	Decision  string            // Approved or Rejected
	Digest    string            // digest of the repository-owned fragment
	DecidedAt string            // RFC 3339
	Files     map[string]string // pinned files, project-relative; nil when not recorded
	// Definition is the repository-owned fragment as the person saw it
	// when deciding (a JSON object, secrets masked); nil when not recorded.
	Definition json.RawMessage
	// Off is the person's switch, "off": true: the server stays out of
	// every session piagent starts, whatever its approval. It lives here,
	// not in the repository's .pi/mcp.json, because a file there makes Pi
	// 1.6 trust the project (issue 38). A record may hold only the
	// switch (Decision "": undecided).
	Off     bool
	unknown map[string]json.RawMessage
}

// Data is the store's content. Its zero value is an empty store.
type Data struct {
	projects map[string]*project
	unknown  map[string]json.RawMessage
}

type project struct {
	servers map[string]Decision
	unknown map[string]json.RawMessage
}

// Get returns the decision recorded for server in project.
func (d *Data) Get(projectKey, server string) (Decision, bool) {
	p := d.projects[projectKey]
	if p == nil {
		return Decision{}, false
	}
	dec, ok := p.servers[server]
	if !ok {
		return Decision{}, false
	}
	return dec.clone(), true
}

// Peek is Get without the copy, for readers on a hot path (the gate reads
// a decision's files for every call after an edit): what it returns shares
// the store's maps and must not be changed.
func (d *Data) Peek(projectKey, server string) (Decision, bool) {
	p := d.projects[projectKey]
	if p == nil {
		return Decision{}, false
	}
	dec, ok := p.servers[server]
	return dec, ok
}

// Set records dec for server in project, replacing any earlier decision.
func (d *Data) Set(projectKey, server string, dec Decision) {
	if d.projects == nil {
		d.projects = map[string]*project{}
	}
	p := d.projects[projectKey]
	if p == nil {
		p = &project{}
		d.projects[projectKey] = p
	}
	if p.servers == nil {
		p.servers = map[string]Decision{}
	}
	// A server name replaces an unknown member of the same name.
	delete(p.unknown, server)
	p.servers[server] = dec.clone()
}

// Delete drops server's decision in project, or the whole project when
// server is "". A project left with no members is dropped. It reports
// whether anything was removed.
func (d *Data) Delete(projectKey, server string) bool {
	p := d.projects[projectKey]
	if p == nil {
		return false
	}
	if server == "" {
		delete(d.projects, projectKey)
		return true
	}
	if _, ok := p.servers[server]; !ok {
		return false
	}
	delete(p.servers, server)
	if len(p.servers) == 0 && len(p.unknown) == 0 {
		delete(d.projects, projectKey)
	}
	return true
}

// Projects returns the project keys, sorted.
func (d *Data) Projects() []string {
	return slices.Sorted(maps.Keys(d.projects))
}

// Servers returns the names of the servers with a decision in project,
// sorted.
func (d *Data) Servers(projectKey string) []string {
	p := d.projects[projectKey]
	if p == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(p.servers))
}

// Stale returns the project keys, sorted, whose paths exists reports as
// gone: what `reset --stale` drops.
func (d *Data) Stale(exists func(path string) bool) []string {
	var out []string
	for _, k := range d.Projects() {
		if !exists(k) {
			out = append(out, k)
		}
	}
	return out
}

// Empty reports a record that holds nothing: no decision, digest, date,
// files, definition, switch or member this version does not know.
func (dec Decision) Empty() bool {
	return dec.Decision == "" && dec.Digest == "" && dec.DecidedAt == "" && dec.Files == nil &&
		len(dec.Definition) == 0 && !dec.Off && len(dec.unknown) == 0
}

func (dec Decision) clone() Decision {
	dec.Files = maps.Clone(dec.Files)
	dec.Definition = slices.Clone(dec.Definition)
	dec.unknown = maps.Clone(dec.unknown)
	return dec
}

// ErrRelative is returned by ProjectKey for a working directory that is not
// an absolute path.
var ErrRelative = errors.New("working directory is not an absolute path")

// ProjectKey is the store's key for the project Pi starts in: the resolved
// real path of the working directory cwd, which must be absolute. A fork, a
// rename or a second checkout therefore gets a key of its own.
func ProjectKey(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("project key for %q: %w", cwd, ErrRelative)
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return "", fmt.Errorf("project key: %w", err)
	}
	return filepath.Clean(real), nil
}

// parse reads a store's bytes strictly. path only names the file in errors.
func parse(path string, data []byte) (*Data, error) {
	corrupt := func(err error) error { return &CorruptError{Path: path, Err: err} }
	if err := checkSyntax(data); err != nil {
		err.Path = path
		return nil, err
	}
	d := &Data{}
	sawVersion := false
	err := members(data, func(k string, raw json.RawMessage) error {
		switch k {
		case "schemaVersion":
			sawVersion = true
			var v float64
			if !isKind(raw, '0') || json.Unmarshal(raw, &v) != nil {
				return errors.New("schemaVersion: want a number")
			}
			if v != SchemaVersion {
				return fmt.Errorf("schemaVersion %s is not supported (want %d)", raw, SchemaVersion)
			}
		case "projects":
			d.projects = nil // a repeated key: the last one wins
			err := members(raw, func(pk string, praw json.RawMessage) error {
				p, err := parseProject(praw)
				if err != nil {
					return fmt.Errorf("[%q]%w", pk, err)
				}
				if d.projects == nil {
					d.projects = map[string]*project{}
				}
				d.projects[pk] = p
				return nil
			})
			if err != nil {
				return fmt.Errorf("projects%w", colon(err))
			}
		default:
			if d.unknown == nil {
				d.unknown = map[string]json.RawMessage{}
			}
			d.unknown[k] = raw
		}
		return nil
	})
	if errors.Is(err, errNotObject) && !isKind(trim(data), '{') {
		return nil, corrupt(errors.New("top level: want an object"))
	}
	if err != nil {
		return nil, corrupt(err)
	}
	if !sawVersion {
		return nil, corrupt(errors.New("schemaVersion is missing"))
	}
	return d, nil
}

// colon prefixes a bare message with ": " and leaves a path step ("[…]",
// ".field") as it is, so nested errors read projects["/p"]["s"].digest: ….
func colon(err error) error {
	if m := err.Error(); m != "" && (m[0] == '[' || m[0] == '.') {
		return err
	}
	return fmt.Errorf(": %w", err)
}

func parseProject(raw json.RawMessage) (*project, error) {
	p := &project{}
	err := members(raw, func(name string, sraw json.RawMessage) error {
		if !isKind(sraw, '{') {
			if p.unknown == nil {
				p.unknown = map[string]json.RawMessage{}
			}
			p.unknown[name] = sraw
			delete(p.servers, name)
			return nil
		}
		dec, err := parseDecision(sraw)
		if err != nil {
			return fmt.Errorf("[%q].%w", name, err)
		}
		if p.servers == nil {
			p.servers = map[string]Decision{}
		}
		delete(p.unknown, name)
		p.servers[name] = dec
		return nil
	})
	if err != nil {
		return nil, colon(err)
	}
	return p, nil
}

func parseDecision(raw json.RawMessage) (Decision, error) {
	var dec Decision
	err := members(raw, func(k string, v json.RawMessage) error {
		var dst *string
		switch k {
		case "decision":
			dst = &dec.Decision
		case "digest":
			dst = &dec.Digest
		case "decidedAt":
			dst = &dec.DecidedAt
		case "files":
			// sized by its commas: a tree pin records thousands
			dec.Files = make(map[string]string, bytes.Count(v, []byte{','})+1)
			err := members(v, func(f string, fv json.RawMessage) error {
				s, err := unquote(fv)
				if err != nil {
					return fmt.Errorf("[%q]: want a string", f)
				}
				dec.Files[f] = s
				return nil
			})
			if err != nil {
				return fmt.Errorf("files%w", colon(err))
			}
			return nil
		case "off":
			switch string(trim(v)) {
			case "true":
				dec.Off = true
			case "false":
			default:
				return fmt.Errorf("off: want true or false")
			}
			return nil
		case "definition":
			if !isKind(v, '{') && !isKind(v, '[') {
				return fmt.Errorf("definition: want an object or an array")
			}
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return fmt.Errorf("definition: %v", err)
			}
			dec.Definition = b.Bytes()
			return nil
		default:
			if dec.unknown == nil {
				dec.unknown = map[string]json.RawMessage{}
			}
			dec.unknown[k] = v
			return nil
		}
		s, err := unquote(v)
		if err != nil {
			return fmt.Errorf("%s: want a string", k)
		}
		*dst = s
		return nil
	})
	return dec, err
}

// isKind reports whether the JSON value raw starts with the given byte:
// '{', '"', or '0' for any number.
func isKind(raw []byte, kind byte) bool {
	raw = trim(raw)
	if len(raw) == 0 {
		return false
	}
	if kind == '0' {
		return raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')
	}
	return raw[0] == kind
}
