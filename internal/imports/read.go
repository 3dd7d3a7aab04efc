package imports

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/safefile"
)

// maxImport is the largest host configuration file read: Claude Code's
// ~/.claude.json keeps history and grows past megabytes.
const maxImport = 64 << 20

// readers maps each kind to its reader, one file per kind, from Table.
var readers = func() map[string]func(*reader) {
	out := make(map[string]func(*reader), len(table))
	for _, k := range table {
		out[k.Name] = k.read
	}
	return out
}()

// reader collects one kind's candidates, servers and consulted paths.
type reader struct {
	home, cwd string
	cwdReal   string
	seen      map[string]bool
	res       Result
}

func newReader(kind, home, cwd string) *reader {
	cwd = filepath.Clean(cwd)
	if !filepath.IsAbs(home) {
		// Anchor a relative home at the cwd rather than at this process's
		// working directory, which is no input of Read.
		home = filepath.Join(cwd, home)
	}
	return &reader{
		home:    filepath.Clean(home),
		cwd:     cwd,
		cwdReal: realish(cwd),
		seen:    map[string]bool{},
		res:     Result{Kind: kind},
	}
}

// homePath joins elems beneath the home directory.
func (r *reader) homePath(elems ...string) string {
	return filepath.Join(append([]string{r.home}, elems...)...)
}

// cwdPath joins elems beneath the cwd.
func (r *reader) cwdPath(elems ...string) string {
	return filepath.Join(append([]string{r.cwd}, elems...)...)
}

// consult records that path was looked at.
func (r *reader) consult(path string) {
	if !r.seen[path] {
		r.seen[path] = true
		r.res.Consulted = append(r.res.Consulted, path)
	}
}

// exists reports what node's existsSync reports: whether stat (following
// symlinks) succeeds.
func (r *reader) exists(path string) bool {
	r.consult(path)
	_, err := os.Stat(path)
	return err == nil
}

func (r *reader) addCandidate(c Candidate) int {
	r.res.Candidates = append(r.res.Candidates, c)
	return len(r.res.Candidates) - 1
}

// read reads and parses one candidate the way readImportedConfig does: TOML
// for a path ending in .toml, JSONC otherwise. It records the candidate and
// returns its index, the parsed value and whether parsing succeeded.
func (r *reader) read(path string, adapter bool) (int, any, bool) {
	c := Candidate{Path: path, Adapter: adapter, InProject: r.inProject(path)}
	if !r.exists(path) {
		c.Status = StatusMissing
		return r.addCandidate(c), nil, false
	}
	v, ok := r.parseInto(&c, path)
	return r.addCandidate(c), v, ok
}

// parseInto reads path and fills c's status and error fields.
func (r *reader) parseInto(c *Candidate, path string) (any, bool) {
	// Only a regular file is read, without blocking and within a limit
	// (safefile): a FIFO or device the repository planted, or swapped in
	// after a stat, would block or never end (the adapter would hang on it
	// as well).
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		c.Status = StatusUnreadable
		c.Err = "is a directory"
		return nil, false
	}
	data, err := safefile.Read(path, safefile.Options{Max: maxImport})
	if errors.Is(err, safefile.ErrNotRegular) {
		c.Status = StatusUnreadable
		c.Err = "not a regular file"
		return nil, false
	}
	if err != nil {
		c.Status = StatusUnreadable
		c.Err = readErr(err)
		return nil, false
	}
	// readFileSync(path, "utf-8") replaces malformed bytes with U+FFFD.
	data = decodeUTF8(data)
	var v any
	var blank bool
	if strings.HasSuffix(path, ".toml") {
		v, err = parseTOML(bytes.TrimPrefix(data, []byte("\uFEFF")))
	} else {
		v, blank, err = jsonc.ParseOwned(data) // data is this reader's alone
	}
	switch {
	case err != nil:
		c.Status = StatusUnreadable
		c.Err = err.Error()
		var se *jsonc.SyntaxError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &se):
			c.Line, c.Column, c.Err = se.Line, se.Column, se.Msg
		case errors.As(err, &de):
			c.Line, c.Column = de.Position()
		}
		return nil, false
	case blank:
		// JSON.parse rejects an empty document, so the adapter warns and
		// moves on: no servers, as if the file were absent.
		c.Status = StatusBlank
		return nil, false
	}
	c.Status = StatusLoaded
	return v, true
}

// readErr words a read error without repeating the path.
func readErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// first reads paths in order like loadImportedConfig: the first that exists
// and parses wins; later ones that exist are shadowed and not parsed. It
// returns the winning candidate's index (or -1) and value.
func (r *reader) first(paths ...string) (int, any) {
	win := -1
	var value any
	for _, p := range paths {
		if win >= 0 {
			r.shadow(p)
			continue
		}
		i, v, ok := r.read(p, true)
		if ok {
			win, value = i, v
		}
	}
	return win, value
}

// shadow records a candidate the adapter never reaches.
func (r *reader) shadow(path string) int {
	c := Candidate{Path: path, Adapter: true, InProject: r.inProject(path), Status: StatusMissing}
	if r.exists(path) {
		c.Status = StatusShadowed
	}
	return r.addCandidate(c)
}

// addServers appends entries, sorted by name, as read from candidate i.
func (r *reader) addServers(entries map[string]map[string]any, i int, adapter bool) {
	c := r.res.Candidates[i]
	for _, name := range sortedKeys(entries) {
		r.res.Servers = append(r.res.Servers, Server{
			Name: name, Entry: entries[name], File: c.Path, Adapter: adapter, InProject: c.InProject,
		})
	}
}

// inProject reports whether path lies inside the cwd, comparing both the
// cleaned paths and the real paths (symlinks resolved).
func (r *reader) inProject(path string) bool {
	return paths.Within(r.cwd, filepath.Clean(path)) || paths.Within(r.cwdReal, realish(path))
}

// realish resolves symlinks in path; for a path that does not exist it
// resolves the nearest existing ancestor and keeps the rest as written.
func realish(path string) string {
	rest := ""
	for d := filepath.Clean(path); ; {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(path)
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = parent
	}
}

// serverMap picks the server map the way `obj.a ?? obj.b` does: the first key
// whose value is neither missing nor null. A document or map that is not an
// object yields nil.
func serverMap(doc any, keys ...string) map[string]any {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	for _, k := range keys {
		if v, ok := obj[k]; ok && v != nil {
			m, _ := v.(map[string]any)
			return m
		}
	}
	return nil
}

// objectEntries keeps the entries that are objects, as toServerEntries and
// extractServers do.
func objectEntries(m map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, v := range m {
		if e, ok := v.(map[string]any); ok {
			out[name] = e
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// spread is JavaScript's object spread `{...v}`: an object's own keys, an
// array's or a string's indices, nothing for anything else.
func spread(v any) map[string]any {
	out := map[string]any{}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out[k] = x
		}
	case []any:
		for i, x := range v {
			out[strconv.Itoa(i)] = x
		}
	case string:
		for i, u := range utf16.Encode([]rune(v)) {
			out[strconv.Itoa(i)] = string(rune(u)) // a lone surrogate becomes U+FFFD
		}
	}
	return out
}

// objectProto lists the properties every plain JavaScript object inherits, so
// `obj[name] === undefined` is false for them even when obj lacks the key.
var objectProto = map[string]bool{
	"constructor": true, "__proto__": true, "hasOwnProperty": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toString": true, "toLocaleString": true, "valueOf": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// jsUndefined reports whether m[key] is undefined in JavaScript.
func jsUndefined(m map[string]any, key string) bool {
	_, own := m[key]
	return !own && !objectProto[key]
}

// toStringRecord keeps an object's string values; nil when none remain.
func toStringRecord(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]any{}
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// decodeUTF8 replaces malformed UTF-8 the way the WHATWG decoder Node uses
// does (jsonc.DecodeUTF8): one U+FFFD for each maximal invalid subpart.
func decodeUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	return []byte(jsonc.DecodeUTF8(data))
}
