package imports

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCodex(t *testing.T) {
	t.Parallel()
	const (
		ct = "h/.codex/config.toml"
		cj = "h/.codex/config.json"
	)
	missingBoth := []string{
		"@/h/.codex/config.toml missing adapter=true proj=false",
		"@/h/.codex/config.json missing adapter=true proj=false",
	}
	runCases(t, []readCase{
		{name: "missing", kind: "codex", want: view{Candidates: missingBoth}},
		{name: "toml translations", kind: "codex",
			files: map[string]string{ct: `
model = "o3"

[mcp_servers.bearer]
url = "https://b"
bearer_token_env_var = "B_TOKEN"

[mcp_servers.keepauth]
url = "https://k"
auth = "oauth"
bearer_token_env_var = "K_TOKEN"

[mcp_servers.hdr]
url = "https://h"
headers = { A = "1", B = "2" }
http_headers = { B = "http", C = "3" }
env_http_headers = { C = "C_VAR", D = "D_VAR", constructor = "X", E = 5 }

[mcp_servers.stdio]
command = "npx"
args = ["-y", "pkg@1.0.0"]
env = { K = "v" }
startup_timeout_sec = 20
enabled = false

[mcp_servers.nonstring]
url = "https://n"
bearer_token_env_var = 7
http_headers = ["x"]
`},
			want: view{
				Servers: []string{
					`bearer @/h/.codex/config.toml adapter=true proj=false {"auth":"bearer","bearerTokenEnv":"B_TOKEN","url":"https://b"}`,
					`hdr @/h/.codex/config.toml adapter=true proj=false {"headers":{"A":"1","B":"http","C":"3","D":"$env:D_VAR"},"url":"https://h"}`,
					`keepauth @/h/.codex/config.toml adapter=true proj=false {"auth":"oauth","bearerTokenEnv":"K_TOKEN","url":"https://k"}`,
					`nonstring @/h/.codex/config.toml adapter=true proj=false {"url":"https://n"}`,
					`stdio @/h/.codex/config.toml adapter=true proj=false {"args":["-y","pkg@1.0.0"],"command":"npx","enabled":false,"env":{"K":"v"},"startup_timeout_sec":20}`,
				},
				Candidates: []string{
					"@/h/.codex/config.toml loaded adapter=true proj=false",
					"@/h/.codex/config.json missing adapter=true proj=false",
				},
			}},
		{name: "mcpServers when mcp_servers is missing, json shadowed", kind: "codex",
			files: map[string]string{
				ct: "[mcpServers.a]\ncommand = \"a\"\n[mcpServers.b]\nbad = 1\n[other]\nx=1\n",
				cj: `{"mcp_servers": {"j": {"command": "j"}}}`,
			},
			want: view{
				Servers: []string{
					`a @/h/.codex/config.toml adapter=true proj=false {"command":"a"}`,
					`b @/h/.codex/config.toml adapter=true proj=false {"bad":1}`,
				},
				Candidates: []string{
					"@/h/.codex/config.toml loaded adapter=true proj=false",
					"@/h/.codex/config.json shadowed adapter=true proj=false",
				},
			}},
		{name: "empty toml still wins", kind: "codex",
			files: map[string]string{ct: "# only a comment\n", cj: `{"mcp_servers": {"j": {"command": "j"}}}`},
			want: view{Candidates: []string{
				"@/h/.codex/config.toml loaded adapter=true proj=false",
				"@/h/.codex/config.json shadowed adapter=true proj=false",
			}}},
		{name: "broken toml falls back to json", kind: "codex",
			files: map[string]string{
				ct: "[mcp_servers.a]\ncommand = \"a\"\nargs = [\"x\",\n  oops]\n",
				cj: "{\"mcp_servers\": {\"j\": {\"command\": \"j\", \"http_headers\": {\"H\": \"v\"}, \"env_http_headers\": {\"H\": \"E\", \"I\": \"I_VAR\"},},},}",
			},
			want: view{
				Servers: []string{`j @/h/.codex/config.json adapter=true proj=false {"command":"j","headers":{"H":"v","I":"$env:I_VAR"}}`},
				Candidates: []string{
					"@/h/.codex/config.toml unreadable adapter=true proj=false at 4:3",
					"@/h/.codex/config.json loaded adapter=true proj=false",
				},
			}},
		{name: "duplicate table is unreadable", kind: "codex",
			files: map[string]string{ct: "[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.a]\ncommand = \"b\"\n"},
			want: view{Candidates: []string{
				"@/h/.codex/config.toml unreadable adapter=true proj=false at 3:2",
				"@/h/.codex/config.json missing adapter=true proj=false",
			}}},
		{name: "unsafe integer is unreadable like smol-toml", kind: "codex",
			files: map[string]string{ct: "[mcp_servers.a]\ncommand = \"a\"\nn = 9007199254740993\n", cj: `{"mcpServers": {"j": {"command": "j"}}}`},
			want: view{
				Servers: []string{`j @/h/.codex/config.json adapter=true proj=false {"command":"j"}`},
				Candidates: []string{
					"@/h/.codex/config.toml unreadable adapter=true proj=false",
					"@/h/.codex/config.json loaded adapter=true proj=false",
				},
			}},
		{name: "bom and malformed utf-8 as node decodes them", kind: "codex",
			files: map[string]string{ct: "\uFEFF[mcp_servers.a]\ncommand = \"a\xff\xe2\x82\"\n"},
			want: view{
				Servers: []string{"a @/h/.codex/config.toml adapter=true proj=false {\"command\":\"a\ufffd\ufffd\"}"},
				Candidates: []string{
					"@/h/.codex/config.toml loaded adapter=true proj=false",
					"@/h/.codex/config.json missing adapter=true proj=false",
				},
			}},
		{name: "toml 1.1 inline tables", kind: "codex",
			files: map[string]string{ct: "mcp_servers = { a = {\n  command = \"a\",\n  env = { K = \"\\e\" },\n} }\n"},
			want: view{
				Servers: []string{`a @/h/.codex/config.toml adapter=true proj=false {"command":"a","env":{"K":"\u001b"}}`},
				Candidates: []string{
					"@/h/.codex/config.toml loaded adapter=true proj=false",
					"@/h/.codex/config.json missing adapter=true proj=false",
				},
			}},
	})
}

func TestCodexEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"nothing to do", map[string]any{"command": "x"}, map[string]any{"command": "x"}},
		{"auth kept when set to null", map[string]any{"bearer_token_env_var": "T", "auth": nil},
			map[string]any{"bearerTokenEnv": "T", "auth": nil}},
		{"bearerTokenEnv replaced", map[string]any{"bearer_token_env_var": "T", "bearerTokenEnv": "OLD"},
			map[string]any{"bearerTokenEnv": "T", "auth": "bearer"}},
		{"string headers spread by index", map[string]any{"headers": "ab", "http_headers": map[string]any{"X": "1"}},
			map[string]any{"headers": map[string]any{"0": "a", "1": "b", "X": "1"}}},
		{"array headers spread by index", map[string]any{"headers": []any{"v"}, "env_http_headers": map[string]any{"0": "E", "1": "F"}},
			map[string]any{"headers": map[string]any{"0": "v", "1": "$env:F"}}},
		{"empty env_http_headers still sets headers", map[string]any{"env_http_headers": map[string]any{}},
			map[string]any{"headers": map[string]any{}}},
		{"env header does not replace an existing one", map[string]any{"headers": map[string]any{"A": nil}, "env_http_headers": map[string]any{"A": "E", "toString": "T"}},
			map[string]any{"headers": map[string]any{"A": nil}}},
		{"non-object http_headers ignored", map[string]any{"headers": map[string]any{"A": "1"}, "http_headers": "x", "env_http_headers": []any{"y"}},
			map[string]any{"headers": map[string]any{"A": "1"}}},
	} {
		got := codexEntry(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, diff)
		}
	}
}

func TestParseTOMLValues(t *testing.T) {
	t.Parallel()
	got, err := parseTOML([]byte(`
i = 42
f = 1.5
n = nan
inf = -inf
d = 1979-05-27
t = 07:32:00.123456
ldt = 1979-05-27T07:32:00
odt = 1979-05-27T07:32:00Z
off = 1979-05-27T00:32:00-07:00
arr = [1, "a", [true]]
[[tab]]
x = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"i": 42.0, "f": 1.5, "n": math.NaN(), "inf": math.Inf(-1),
		"d": "1979-05-27", "t": "07:32:00.123", "ldt": "1979-05-27T07:32:00.000",
		"odt": "1979-05-27T07:32:00.000Z", "off": "1979-05-27T00:32:00.000-07:00",
		"arr": []any{1.0, "a", []any{true}}, "tab": []any{map[string]any{"x": 1.0}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := parseTOML([]byte("x = -9007199254740992")); err == nil {
		t.Error("unsafe negative integer accepted")
	}
	if _, err := parseTOML([]byte("x = -9007199254740991")); err != nil {
		t.Errorf("safe integer refused: %v", err)
	}
}
