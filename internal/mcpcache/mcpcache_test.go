package mcpcache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const sample = `{"version":1,"servers":{
 "repo-tools":{"configHash":"abc","tools":[{"name":"echo","description":"d","inputSchema":{}},{"name":"a.b"}],
   "resources":[{"uri":"file:///r","name":"README.md"}],"cachedAt":1700000000000},
 "ttl":{"configHash":"h","tools":[],"cachedAt":1700000000000,"ttlMs":60000,"cacheScope":"x"}
}}`

func TestLoadMissingIsEmpty(t *testing.T) {
	t.Parallel()
	c, err := Load(filepath.Join(t.TempDir(), "mcp-cache.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Servers == nil || len(c.Servers) != 0 {
		t.Fatalf("got %+v, want an empty cache", c)
	}
	if c.Fresh("anything", time.Now()) {
		t.Fatal("empty cache reports a fresh entry")
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	if err := os.WriteFile(path, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServerEntry{
		"repo-tools": {
			ConfigHash: "abc",
			Tools:      []Tool{{Name: "echo"}, {Name: "a.b"}},
			Resources:  []Resource{{Name: "README.md", URI: "file:///r"}},
			CachedAt:   time.UnixMilli(1700000000000),
		},
		"ttl": {
			ConfigHash: "h",
			Tools:      []Tool{},
			CachedAt:   time.UnixMilli(1700000000000),
			TTL:        time.Minute,
			HasTTL:     true,
		},
	}
	if diff := cmp.Diff(want, c.Servers, cmpopts.IgnoreUnexported(ServerEntry{}), cmpopts.IgnoreFields(ServerEntry{}, "Raw"), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"echo", "a.b"}, c.Servers["repo-tools"].ToolNames()); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]string{"README.md"}, c.Servers["repo-tools"].ResourceNames()); diff != "" {
		t.Error(diff)
	}
	if got := c.Servers["ttl"].ToolNames(); got == nil || len(got) != 0 {
		t.Errorf("cached server without tools: ToolNames = %#v, want empty non-nil", got)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    error
	}{
		{"corrupt", `{"version":1,"servers":{`, ErrSyntax},
		{"trailing data", `{"version":1,"servers":{}} x`, ErrSyntax},
		{"bom", "\ufeff{\"version\":1,\"servers\":{}}", ErrSyntax},
		{"empty file", ``, ErrSyntax},
		{"version 2", `{"version":2,"servers":{}}`, ErrVersion},
		{"version string", `{"version":"1","servers":{}}`, ErrVersion},
		{"no version", `{"servers":{}}`, ErrVersion},
		{"Version key case", `{"Version":1,"servers":{}}`, ErrVersion},
		{"array", `[1]`, ErrVersion},
		{"null", `null`, ErrVersion},
		{"no servers", `{"version":1}`, ErrShape},
		{"servers null", `{"version":1,"servers":null}`, ErrShape},
		{"servers string", `{"version":1,"servers":"x"}`, ErrShape},
		{"Servers key case", `{"version":1,"Servers":{}}`, ErrShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "mcp-cache.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if c != nil {
				t.Errorf("got a cache with the error")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var le *LoadError
			if !errors.As(err, &le) || le.Path != path || !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %q does not name %s", err, path)
			}
		})
	}
}

func TestLoadTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	big := `{"version":1,"servers":{},"pad":"` + strings.Repeat("x", MaxSize) + `"}`
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // a directory cannot be read as a file
	if _, err := Load(dir); err == nil {
		t.Fatal("reading a directory succeeded")
	}
}

func TestEntryShapes(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`{"version":1.0,"servers":{
		"notobj": 5,
		"nullentry": null,
		"notools": {"cachedAt": 1},
		"toolsobj": {"tools": {"name": "x"}, "cachedAt": 1},
		"toolsnull": {"tools": null, "cachedAt": 1},
		"badres": {"tools": [], "resources": 7, "cachedAt": 1},
		"mixed": {"tools": [{"name": "ok"}, {"name": 3}, 5, {"description": "no name"}, {"name": ""}],
		          "resources": [{"name": "r"}, {"uri": "u"}, {"name": "s", "uri": "v"}], "cachedAt": 1},
		"Tools": {"Tools": [{"name": "x"}], "cachedAt": 1}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notobj", "nullentry", "notools", "toolsobj", "toolsnull", "badres", "Tools"} {
		e := c.Servers[name]
		if e.Err == nil {
			t.Errorf("%s: Err is nil", name)
		}
		if e.Fresh(time.UnixMilli(2)) || e.ToolNames() != nil {
			t.Errorf("%s: an unusable entry is fresh or lists tools", name)
		}
	}
	m := c.Servers["mixed"]
	if m.Err != nil {
		t.Fatal(m.Err)
	}
	if diff := cmp.Diff([]Tool{{Name: "ok"}, {Name: ""}}, m.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Resource{{Name: "r"}, {Name: "s", URI: "v"}}, m.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestServersArray(t *testing.T) {
	t.Parallel()
	// The adapter only asks for a truthy object; an array's elements are then
	// reachable by index.
	c, err := Parse([]byte(`{"version":1,"servers":[{"tools":[{"name":"x"}],"cachedAt":5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x"}, c.Servers["0"].ToolNames()); diff != "" {
		t.Error(diff)
	}
}

func TestFresh(t *testing.T) {
	t.Parallel()
	const at = int64(1_700_000_000_000)
	day := int64(24 * time.Hour / time.Millisecond)
	week := 7 * day
	entry := func(extra string) string {
		return `{"version":1,"servers":{"s":{"tools":[],"cachedAt":1700000000000` + extra + `}}}`
	}
	tests := []struct {
		name  string
		json  string
		nowMs int64
		want  bool
	}{
		{"just written", entry(""), at, true},
		{"future cachedAt", entry(""), at - day, true},
		{"six days", entry(""), at + 6*day, true},
		{"exactly seven days", entry(""), at + week, true},
		{"seven days and a ms", entry(""), at + week + 1, false},
		{"ttl 0 never valid", entry(`,"ttlMs":0`), at, false},
		{"ttl -0 never valid", entry(`,"ttlMs":-0`), at, false},
		{"ttl within", entry(`,"ttlMs":60000`), at + 59999, true},
		{"ttl reached", entry(`,"ttlMs":60000`), at + 60000, false},
		{"ttl longer than a week is capped", entry(`,"ttlMs":1209600000`), at + week, false},
		{"ttl longer than a week, within", entry(`,"ttlMs":1209600000`), at + week - 1, true},
		{"negative ttl ignored", entry(`,"ttlMs":-5`), at + 6*day, true},
		{"fractional ttl ignored", entry(`,"ttlMs":1.5`), at + 6*day, true},
		{"unsafe ttl ignored", entry(`,"ttlMs":9007199254740992`), at + 6*day, true},
		{"string ttl ignored", entry(`,"ttlMs":"0"`), at, true},
		{"no cachedAt", `{"version":1,"servers":{"s":{"tools":[]}}}`, at, false},
		{"cachedAt 0", `{"version":1,"servers":{"s":{"tools":[],"cachedAt":0}}}`, 1, false},
		{"cachedAt string", `{"version":1,"servers":{"s":{"tools":[],"cachedAt":"1700000000000"}}}`, at, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Fresh("s", time.UnixMilli(tt.nowMs)); got != tt.want {
				t.Errorf("Fresh = %v, want %v", got, tt.want)
			}
			if c.Fresh("other", time.UnixMilli(tt.nowMs)) {
				t.Error("an absent server is fresh")
			}
		})
	}
	var nilCache *Cache
	if nilCache.Fresh("s", time.Now()) {
		t.Error("nil cache is fresh")
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"version":1,"servers":{}}`))
	f.Add([]byte(`{"version":1,"servers":[{"tools":[{"name":"x"}],"cachedAt":5,"ttlMs":0}]}`))
	f.Add([]byte(`{"version":1,"servers":{"a":{"tools":null,"resources":[{"name":1}],"cachedAt":-1e300}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if c != nil {
				t.Fatal("cache returned with an error")
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrShape) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if c.Servers == nil || c.Version != 1 {
			t.Fatalf("bad cache %+v", c)
		}
		now := time.UnixMilli(1_700_000_000_000)
		for name, e := range c.Servers {
			fresh := c.Fresh(name, now)
			if fresh && (e.Err != nil || e.CachedAt.IsZero() || (e.HasTTL && e.TTL == 0)) {
				t.Fatalf("%q: unusable entry is fresh: %+v", name, e)
			}
			if e.Err != nil && (e.ToolNames() != nil || e.ResourceNames() != nil) {
				t.Fatalf("%q: unusable entry lists names", name)
			}
		}
	})
}
