package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/safefile"
)

// Store is the decision file at Path. Use Open; the zero value has no path.
type Store struct {
	Path string
	// Waiting, when set, is told who holds the store's lock if Update has
	// to wait for it (atomicfile.LockOptions).
	Waiting func(holder string)
}

// Open returns the store at path (usually ~/.pi/piagent-mcp-approvals.json).
// Nothing is read until Load or Update.
func Open(path string) *Store {
	return &Store{Path: path}
}

// Load reads the store. A missing file is an empty store. The errors are a
// *CorruptError, ErrTooLarge or ErrNotRegular wrapped with the path, or the
// *fs.PathError of a file that cannot be read.
func (s *Store) Load() (*Data, error) {
	d, _, err := s.load()
	return d, err
}

// load also returns the bytes read (nil when the file is missing).
func (s *Store) load() (*Data, []byte, error) {
	if s == nil || s.Path == "" {
		return nil, nil, errors.New("approval store has no path")
	}
	data, err := readRegular(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Data{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	d, err := parse(s.Path, data)
	if err != nil {
		return nil, nil, err
	}
	return d, data, nil
}

// readRegular reads the store through safefile: a regular file of at
// most MaxSize bytes (a link to one is followed), opened without blocking,
// and the person's by StrictModes (a *safefile.UnsafeError naming the fix
// otherwise).
func readRegular(path string) ([]byte, error) {
	data, err := safefile.Read(path, safefile.Options{Max: MaxSize, Own: true})
	var se *safefile.Error
	if errors.As(err, &se) {
		switch {
		case errors.Is(err, safefile.ErrTooLarge):
			return nil, fmt.Errorf("%s: %w", se.Path, ErrTooLarge)
		case se.Detail != "":
			return nil, fmt.Errorf("%s: %w (%s)", se.Path, ErrNotRegular, se.Detail)
		default:
			return nil, fmt.Errorf("%s: %w (%v)", se.Path, ErrNotRegular, se.Err)
		}
	}
	return data, err
}

// Update loads the store, lets fn change it and saves the result, all under
// the store's lock, so concurrent updates from any number of processes are
// applied one after another. It writes nothing when loading fails (a
// corrupt, oversized or non-regular store stays as it is), when fn returns
// an error (which Update returns), or when the content did not change.
func (s *Store) Update(fn func(*Data) error) error {
	if s == nil || s.Path == "" {
		return errors.New("approval store has no path")
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create approval store folder: %w", err)
	}
	release, err := atomicfile.Lock(s.Path+".lock", atomicfile.LockOptions{Waiting: s.Waiting})
	if err != nil {
		return fmt.Errorf("lock the approval store: %w", err)
	}
	defer release()

	d, old, err := s.load()
	if err != nil {
		return err
	}
	if err := fn(d); err != nil {
		return err
	}
	out, err := d.marshal()
	if err != nil {
		return err
	}
	if bytes.Equal(out, old) || (old == nil && d.empty()) {
		return nil
	}
	target := s.Path
	if real, err := filepath.EvalSymlinks(s.Path); err == nil {
		target = real // write through a link to a regular file (checked by load)
	}
	return writeAtomic(target, out)
}

// writeAtomic replaces path with data (internal/atomicfile: a temporary
// file in the same folder, synced, mode 0600, renamed over path).
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("write approval store: %w", err)
	}
	return nil
}

func (d *Data) empty() bool {
	return len(d.projects) == 0 && len(d.unknown) == 0
}

// marshal renders the store: known members first in a fixed order, unknown
// ones after them sorted by key, two-space indentation, no HTML escaping.
func (d *Data) marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fileJSON{d}); err != nil {
		return nil, fmt.Errorf("encode approval store: %w", err)
	}
	return b.Bytes(), nil
}

type fileJSON struct{ d *Data }

func (f fileJSON) MarshalJSON() ([]byte, error) {
	w := objectWriter{}
	w.member("schemaVersion", json.RawMessage("1"))
	projects := objectWriter{}
	for _, pk := range f.d.Projects() {
		p := f.d.projects[pk]
		pw := objectWriter{}
		for _, name := range slices.Sorted(maps.Keys(p.servers)) {
			pw.member(name, decisionJSON(p.servers[name]))
		}
		pw.unknown(p.unknown)
		projects.member(pk, pw.close())
	}
	w.member("projects", projects.close())
	w.unknown(f.d.unknown)
	return w.close(), nil
}

func decisionJSON(dec Decision) json.RawMessage {
	w := objectWriter{}
	if dec.Decision != "" {
		w.member("decision", dec.Decision)
	}
	if dec.Digest != "" {
		w.member("digest", dec.Digest)
	}
	if dec.DecidedAt != "" {
		w.member("decidedAt", dec.DecidedAt)
	}
	if dec.Files != nil {
		fw := objectWriter{}
		for _, f := range slices.Sorted(maps.Keys(dec.Files)) {
			fw.member(f, dec.Files[f])
		}
		w.member("files", fw.close())
	}
	if len(dec.Definition) > 0 {
		w.member("definition", dec.Definition)
	}
	if dec.Off {
		w.member("off", true)
	}
	w.unknown(dec.unknown)
	return w.close()
}

// objectWriter builds a compact JSON object with members in the order they
// are added; the Encoder indents the whole document afterwards.
type objectWriter struct {
	buf []byte
}

func (w *objectWriter) member(k string, v any) {
	if len(w.buf) == 0 {
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, ',')
	}
	w.buf = appendJSON(w.buf, k)
	w.buf = append(w.buf, ':')
	w.buf = appendJSON(w.buf, v)
}

func (w *objectWriter) unknown(m map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.member(k, m[k])
	}
}

func (w *objectWriter) close() json.RawMessage {
	if len(w.buf) == 0 {
		return json.RawMessage("{}")
	}
	return append(w.buf, '}')
}

func appendJSON(buf []byte, v any) []byte {
	if raw, ok := v.(json.RawMessage); ok {
		return append(buf, raw...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // strings only: cannot fail
	return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// checkSyntax reports invalid UTF-8 or invalid JSON with its line and column.
func checkSyntax(data []byte) *CorruptError {
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		line, col := position(data, i)
		return &CorruptError{Line: line, Column: col, Err: errors.New("invalid utf-8")}
	}
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset) - 1
		if off < 0 {
			off = 0
		}
		line, col := position(data, off)
		return &CorruptError{Line: line, Column: col, Err: se}
	}
	if err == nil {
		err = errors.New("invalid json")
	}
	line, col := position(data, len(data))
	return &CorruptError{Line: line, Column: col, Err: err}
}

// position is the 1-based line and column (in characters) of byte offset i.
func position(data []byte, i int) (line, col int) {
	i = min(i, len(data))
	before := data[:i]
	line = 1 + bytes.Count(before, []byte("\n"))
	if nl := bytes.LastIndexByte(before, '\n'); nl >= 0 {
		before = before[nl+1:]
	}
	return line, 1 + utf8.RuneCount(before)
}
