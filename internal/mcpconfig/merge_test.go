package mcpconfig

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		base, next, want string
	}{
		{"no base copies next", `null`, `{"command": "a"}`, `{"command": "a"}`},
		{"partial override keeps command", `{"command": "a", "args": ["1"], "env": {"A": "1"}}`, `{"args": ["2"]}`,
			`{"command": "a", "args": ["2"], "env": {"A": "1"}}`},
		{"nested values replaced whole", `{"command": "a", "env": {"A": "1", "B": "2"}}`, `{"env": {"C": "3"}}`,
			`{"command": "a", "env": {"C": "3"}}`},
		{"command drops http and socket keys",
			`{"url": "https://a", "headers": {"h": "1"}, "requestHeadersCommand": {"command": "x"}, "caFile": "c", "auth": "bearer", "bearerToken": "t", "bearerTokenEnv": "E", "bearerTokenStore": true, "oauth": {"clientId": "i"}, "httpTransport": "sse", "socket": "/s", "lifecycle": "eager"}`,
			`{"command": "b"}`, `{"command": "b", "lifecycle": "eager"}`},
		{"url drops process and socket keys",
			`{"command": "a", "args": ["x"], "env": {"A": "1"}, "cwd": "/w", "pluginDataDir": "/d", "literalEnv": true, "inheritEnv": false, "socket": "/s", "debug": true}`,
			`{"url": "https://b"}`, `{"url": "https://b", "debug": true}`},
		{"socket drops both groups",
			`{"command": "a", "args": ["x"], "env": {}, "cwd": "/w", "pluginDataDir": "/d", "literalEnv": true, "inheritEnv": true, "url": "https://a", "headers": {}, "requestHeadersCommand": {}, "caFile": "c", "auth": "oauth", "bearerToken": "t", "bearerTokenEnv": "E", "bearerTokenStore": true, "oauth": false, "httpTransport": "sse", "tasks": false}`,
			`{"socket": "/s"}`, `{"socket": "/s", "tasks": false}`},
		{"changed url drops url-bound credentials",
			`{"url": "https://a", "headers": {"Authorization": "x"}, "bearerToken": "t", "bearerTokenEnv": "E", "bearerTokenStore": true, "requestHeadersCommand": {"command": "h"}, "caFile": "c", "oauth": {"clientId": "i"}, "auth": "oauth"}`,
			`{"url": "https://evil"}`, `{"url": "https://evil", "auth": "oauth"}`},
		{"changed url keeps oauth false", `{"url": "https://a", "oauth": false}`, `{"url": "https://b"}`, `{"url": "https://b", "oauth": false}`},
		{"same url keeps credentials", `{"url": "https://a", "headers": {"h": "1"}, "oauth": {"x": 1}}`, `{"url": "https://a", "timeout": 1}`,
			`{"url": "https://a", "headers": {"h": "1"}, "oauth": {"x": 1}, "timeout": 1}`},
		{"url over non-string url counts as changed", `{"url": 5, "headers": {"h": "1"}}`, `{"url": "https://a"}`, `{"url": "https://a"}`},
		{"re-supplied credentials apply", `{"url": "https://a", "headers": {"h": "1"}}`, `{"url": "https://b", "headers": {"h": "2"}}`,
			`{"url": "https://b", "headers": {"h": "2"}}`},
		{"non-string command removes nothing", `{"url": "https://a", "headers": {}}`, `{"command": ["x"]}`,
			`{"url": "https://a", "headers": {}, "command": ["x"]}`},
		{"command wins over url in next", `{"env": {"A": "1"}, "headers": {"h": "1"}}`, `{"command": "c", "url": "https://u"}`,
			`{"env": {"A": "1"}, "command": "c", "url": "https://u"}`},
		{"empty base is still a base", `{}`, `{"url": "https://u"}`, `{"url": "https://u"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var base, next, want Entry
			for _, p := range []struct {
				s string
				e *Entry
			}{{tt.base, &base}, {tt.next, &next}, {tt.want, &want}} {
				if err := json.Unmarshal([]byte(p.s), p.e); err != nil {
					t.Fatal(err)
				}
			}
			got := MergeEntry(base, next)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeDoesNotMutate(t *testing.T) {
	t.Parallel()
	base := Entry{"url": "https://a", "headers": map[string]any{"h": "1"}}
	next := Entry{"command": "x"}
	MergeEntry(base, next)
	if len(base) != 2 || len(next) != 1 {
		t.Errorf("inputs changed: %v %v", base, next)
	}
}

// Agent Plugin entries keep env literal; a higher layer that replaces env
// without saying literalEnv loses the literal flag.
func TestMergeLiteralEnv(t *testing.T) {
	t.Parallel()
	base := &node{entry: Entry{"command": "c", "env": map[string]any{"A": "1"}, "literalEnv": true}, lit: litArgs | litEnv | litCwd}
	got := mergeNode(base, &node{entry: Entry{"env": map[string]any{"B": "2"}}})
	if _, ok := got.entry["literalEnv"]; ok || got.lit&litEnv != 0 {
		t.Errorf("literalEnv kept: %v lit=%b", got.entry, got.lit)
	}
	got = mergeNode(base, &node{entry: Entry{"env": map[string]any{"B": "2"}, "literalEnv": true}})
	if got.entry["literalEnv"] != true {
		t.Errorf("explicit literalEnv lost: %v", got.entry)
	}
	got = mergeNode(base, &node{entry: Entry{"args": []any{"x"}}})
	if got.entry["literalEnv"] != true || got.lit != litEnv {
		t.Errorf("args override: %v lit=%b", got.entry, got.lit)
	}
	// Without the plugin mark, env replacement keeps literalEnv.
	plain := &node{entry: base.entry}
	if got := mergeNode(plain, &node{entry: Entry{"env": map[string]any{}}}); got.entry["literalEnv"] != true {
		t.Errorf("unmarked literalEnv dropped: %v", got.entry)
	}
}

// The adapter's merge is not associative; mergeMaps must follow its tree.
func TestMergeTreeOrder(t *testing.T) {
	t.Parallel()
	a := Entry{"command": "x", "env": map[string]any{"E": "1"}}
	b := Entry{"url": "https://u"}
	c := Entry{"command": "y"}
	seq := MergeEntry(MergeEntry(a, b), c)
	nested := MergeEntry(a, MergeEntry(b, c))
	if cmp.Equal(seq, nested) {
		t.Fatalf("expected different results, both %v", seq)
	}
	if _, ok := nested["env"]; !ok {
		t.Errorf("nested = %v", nested)
	}
}

func FuzzMerge(f *testing.F) {
	f.Add(`{"command": "a", "env": {"A": "1"}}`, `{"url": "https://b"}`)
	f.Add(`{"url": "https://a", "headers": {"h": "1"}, "oauth": false}`, `{"url": "https://b"}`)
	f.Add(`{"socket": "/s", "args": []}`, `{"command": "c", "socket": "/t"}`)
	f.Add(`{}`, `{"socket": 1, "url": null}`)
	f.Add(`null`, `{"a": 1}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var base, next Entry
		if json.Unmarshal([]byte(a), &base) != nil || json.Unmarshal([]byte(b), &next) != nil || next == nil {
			return
		}
		got := MergeEntry(base, next)
		again := MergeEntry(base, next)
		if !cmp.Equal(got, again) {
			t.Fatalf("not deterministic: %v vs %v", got, again)
		}
		for k, v := range next {
			if !cmp.Equal(got[k], v) {
				t.Fatalf("key %q of next not kept: %v", k, got)
			}
		}
		for k := range got {
			_, inBase := base[k]
			_, inNext := next[k]
			if !inBase && !inNext {
				t.Fatalf("key %q from nowhere", k)
			}
		}
		if _, ok := next["url"].(string); ok && next["url"] != base["url"] {
			if _, inNext := next["headers"]; !inNext {
				if _, ok := got["headers"]; ok {
					t.Fatalf("headers survived a url change: %v", got)
				}
			}
		}
		// Merging the result again with next changes nothing.
		if twice := MergeEntry(got, next); !cmp.Equal(twice, got) {
			t.Fatalf("not idempotent: %v then %v", got, twice)
		}
	})
}
