package imports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/piagent/piagent/internal/jsonc"
)

// FuzzCodexTOML: parsing and translating any bytes never panics, and a
// document that parses gives the same servers twice.
func FuzzCodexTOML(f *testing.F) {
	for _, s := range []string{
		"",
		"[mcp_servers.a]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n",
		"[mcp_servers.b]\nurl = \"https://b\"\nbearer_token_env_var = \"T\"\nhttp_headers = { A = \"1\" }\nenv_http_headers = { B = \"E\" }\n",
		"[mcpServers.c]\nheaders = \"str\"\nenv_http_headers = { 0 = \"X\", constructor = \"Y\" }\n",
		"mcp_servers = { d = { command = \"d\", env = { K = 1979-05-27 } } }\n",
		"mcp_servers = 5\nmcpServers = { e = { command = \"e\" } }\n",
		"x = nan\n[mcp_servers.f]\nn = inf\nm = 9007199254740993\n",
		"\uFEFF[[mcp_servers]]\n",
	} {
		f.Add([]byte(s))
	}
	opts := cmpopts.EquateNaNs()
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseTOML(decodeUTF8(data))
		if err != nil {
			return
		}
		first := codexServers(doc)
		again, err := parseTOML(decodeUTF8(data))
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		if diff := cmp.Diff(first, codexServers(again), opts); diff != "" {
			t.Fatalf("unstable (-first +second)\n%s", diff)
		}
		for name, e := range first {
			for _, k := range []string{"bearer_token_env_var", "http_headers", "env_http_headers"} {
				if _, ok := e[k]; ok {
					t.Errorf("%s keeps %s", name, k)
				}
			}
		}
	})
}

// FuzzOpencode: merging and translating any pair of global and project
// documents never panics, is stable, and yields only the adapter's shapes.
func FuzzOpencode(f *testing.F) {
	f.Add([]byte(`{"mcp": {"a": {"type": "local", "command": ["x", "y"], "environment": {"K": "v"}}}}`),
		[]byte(`{"mcp": {"a": {"command": ["x"], "environment": {"L": "w"}, "cwd": "/"}}}`))
	f.Add([]byte(`{"mcp": {"r": {"type": "remote", "url": "https://r", "headers": {"A": "1"}, "oauth": {"clientId": "c"}}}}`),
		[]byte(`{"mcp": {"r": {"url": "https://s", "oauth": {"scope": "s"}}, "off": {"type": "local", "command": ["o"], "enabled": false}}}`))
	f.Add([]byte(`{"mcp": {"t": {"type": "remote", "url": "https://t"}}}`), []byte(`{"mcp": {"t": {"type": "local", "command": ["c"]}}}`))
	f.Add([]byte(`[]`), []byte(`{"mcp": 1}`))
	f.Add([]byte(`{"mcp": {"a": 1}}`), []byte("// c\n{\"mcp\": {\"a\": {\"type\": \"remote\", \"url\": \"u\", \"oauth\": false,},},}"))
	f.Fuzz(func(t *testing.T, global, project []byte) {
		run := func() map[string]map[string]any {
			merged := map[string]any{}
			for _, data := range [][]byte{global, project} {
				v, _, err := jsonc.Parse(decodeUTF8(data))
				if doc, ok := v.(map[string]any); err == nil && ok {
					merged = mergeOpencode(merged, doc)
				}
			}
			return opencodeServers(merged)
		}
		first := run()
		if diff := cmp.Diff(first, run()); diff != "" {
			t.Fatalf("unstable (-first +second)\n%s", diff)
		}
		local := map[string]bool{"command": true, "args": true, "env": true, "cwd": true}
		remote := map[string]bool{"url": true, "headers": true, "auth": true, "oauth": true}
		for name, e := range first {
			shape := remote
			if _, ok := e["command"].(string); ok {
				shape = local
			} else if _, ok := e["url"].(string); !ok {
				t.Fatalf("%s has neither command nor url: %v", name, e)
			}
			for k := range e {
				if !shape[k] {
					t.Errorf("%s has field %q outside its shape", name, k)
				}
			}
		}
	})
}
