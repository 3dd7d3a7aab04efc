// Package mcpcache reads pi-mcp-adapter's metadata cache,
// <agentDir>/mcp-cache.json: the tools and resources each server listed the
// last time it connected, keyed by server name. The adapter registers direct
// tools and namespace proxies only from this file, and resolves mcp proxy
// calls against it, so a guard needs the same view.
//
// The file belongs to the adapter, so it is read the way the adapter reads
// it: strict JSON, version 1, exact key names. Whatever the adapter would
// reject as a whole (unreadable JSON, another version, no servers object) is
// an error here, and in every such case the adapter itself sees no cache.
// An entry the adapter could not use is kept with its Err set, and is never
// Fresh.
//
// The entry's configHash is carried but not checked: reproducing it needs
// the interpolated definition and environment, which is the caller's
// business.
package mcpcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"time"

	"github.com/piagent/piagent/internal/safefile"
)

// MaxSize is the largest cache file Load reads.
const MaxSize = 16 << 20

// MaxAge is the adapter's upper bound on an entry's age (7 days).
const MaxAge = 7 * 24 * time.Hour

// Errors, wrapped in a *LoadError by Load and returned as is by Parse.
var (
	ErrTooLarge = errors.New("cache file is larger than 16 MiB")
	ErrSyntax   = errors.New("not valid JSON")
	ErrVersion  = errors.New("unsupported cache version")
	ErrShape    = errors.New("no servers object")
)

// LoadError says which cache file could not be used and why.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Cache is the decoded file.
type Cache struct {
	Version int
	Servers map[string]ServerEntry
}

// ServerEntry is one server's cached metadata.
type ServerEntry struct {
	ConfigHash string
	Tools      []Tool
	Resources  []Resource
	// CachedAt is when the entry was written; zero when cachedAt is missing,
	// zero or not a number.
	CachedAt time.Time
	// TTL is the entry's own ttlMs, meaningful only when HasTTL: the adapter
	// honours ttlMs only when it is a non-negative safe integer.
	TTL    time.Duration
	HasTTL bool
	// Err is set when the adapter could not use the entry (not an object,
	// tools not a list, ...). Such an entry is never Fresh.
	Err error
	// Raw is the entry as the file holds it: what the server offered the
	// model, for its catalogue pin (package catalogue).
	Raw json.RawMessage

	cachedAtMs float64
}

// Tool is one cached tool. Entries without a string name are dropped (the
// adapter skips or trips over them); an empty name is kept, since the
// adapter's direct-tool path still registers it.
type Tool struct {
	Name string
}

// Resource is one cached resource. As with tools, only a string name is
// required: the adapter's direct-tool path does not check the URI.
type Resource struct {
	Name string
	URI  string
}

// Load reads the cache file at path. A missing file is an empty cache, not
// an error. Errors are *LoadError values naming the path.
func Load(path string) (*Cache, error) {
	data, err := safefile.Read(path, safefile.Options{Max: MaxSize})
	if errors.Is(err, fs.ErrNotExist) {
		return &Cache{Version: 1, Servers: map[string]ServerEntry{}}, nil
	}
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, &LoadError{Path: path, Err: ErrTooLarge}
	}
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	c, err := Parse(data)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	return c, nil
}

// Parse decodes the contents of a cache file.
func Parse(data []byte) (*Cache, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		// An array or scalar at the top has no version either.
		var v any
		if json.Unmarshal(data, &v) != nil {
			return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		return nil, ErrVersion
	}
	var version float64
	if raw, ok := top["version"]; !ok || json.Unmarshal(raw, &version) != nil || version != 1 {
		return nil, ErrVersion
	}
	servers, ok := decodeContainer(top["servers"])
	if !ok {
		return nil, ErrShape
	}
	c := &Cache{Version: 1, Servers: make(map[string]ServerEntry, len(servers))}
	for name, raw := range servers {
		c.Servers[name] = decodeEntry(raw)
	}
	return c, nil
}

// decodeContainer reads the servers value: an object, or, since the adapter
// only asks that it be a truthy object, an array whose elements are keyed by
// their index.
func decodeContainer(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		return obj, true
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil && arr != nil {
		obj = make(map[string]json.RawMessage, len(arr))
		for i, v := range arr {
			obj[strconv.Itoa(i)] = v
		}
		return obj, true
	}
	return nil, false
}

var (
	errEntryNotObject = errors.New("entry is not an object")
	errToolsNotList   = errors.New("tools is not a list")
	errResNotList     = errors.New("resources is not a list")
)

func decodeEntry(raw json.RawMessage) ServerEntry {
	var e ServerEntry
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		e.Err = errEntryNotObject
		return e
	}
	e.Raw = raw
	_ = json.Unmarshal(obj["configHash"], &e.ConfigHash)

	if raw, ok := obj["tools"]; ok {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || items == nil {
			e.Err = errToolsNotList
		}
		e.Tools = []Tool{}
		for _, it := range items {
			var t map[string]json.RawMessage
			var name string
			if json.Unmarshal(it, &t) != nil || json.Unmarshal(t["name"], &name) != nil {
				continue
			}
			e.Tools = append(e.Tools, Tool{Name: name})
		}
	} else {
		e.Err = errToolsNotList
	}

	if raw, ok := obj["resources"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			if e.Err == nil {
				e.Err = errResNotList
			}
		}
		for _, it := range items {
			var r map[string]json.RawMessage
			var res Resource
			if json.Unmarshal(it, &r) != nil {
				continue
			}
			if json.Unmarshal(r["name"], &res.Name) != nil {
				continue
			}
			_ = json.Unmarshal(r["uri"], &res.URI)
			e.Resources = append(e.Resources, res)
		}
	}

	var at float64
	if json.Unmarshal(obj["cachedAt"], &at) == nil && at != 0 && !math.IsNaN(at) {
		e.cachedAtMs = at
		e.CachedAt = msTime(at)
	}
	var ttl float64
	if json.Unmarshal(obj["ttlMs"], &ttl) == nil && ttl >= 0 && ttl <= 1<<53-1 && ttl == math.Trunc(ttl) {
		e.HasTTL = true
		e.TTL = msDuration(ttl)
	}
	return e
}

func msTime(ms float64) time.Time {
	const maxMs = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms >= float64(maxMs):
		return time.UnixMilli(maxMs)
	case ms <= -float64(maxMs):
		return time.UnixMilli(-maxMs)
	}
	whole := math.Trunc(ms)
	return time.UnixMilli(int64(whole)).Add(time.Duration((ms - whole) * float64(time.Millisecond)))
}

func msDuration(ms float64) time.Duration {
	if ms >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms) * time.Millisecond
}

// ToolNames lists the entry's tool names in cache order; nil for an entry
// with Err set. It is the shape toolname.Server.Tools wants.
func (e ServerEntry) ToolNames() []string {
	if e.Err != nil {
		return nil
	}
	out := make([]string, len(e.Tools))
	for i, t := range e.Tools {
		out[i] = t.Name
	}
	return out
}

// ResourceNames lists the entry's resource names; nil for an entry with Err
// set.
func (e ServerEntry) ResourceNames() []string {
	if e.Err != nil {
		return nil
	}
	out := make([]string, len(e.Resources))
	for i, r := range e.Resources {
		out[i] = r.Name
	}
	return out
}
