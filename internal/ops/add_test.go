package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fake credentials, one per rule family. None is real.
var fakeSecrets = map[string]string{
	"github-token":    "ghp_" + strings.Repeat("aB3dE5fG7h", 4),
	"github-pat":      "github_pat_" + strings.Repeat("11ABCDEFG0", 6),
	"anthropic-key":   "sk-ant-api03-" + strings.Repeat("xY7wV5uT3s", 4),
	"openai-key":      "sk-proj-" + strings.Repeat("Ab3Cd5Ef7G", 3),
	"aws-access-key":  "AKIAIOSFODNN7EXAMPLE",
	"slack-token":     "xoxb-1234567890-abcdefghij",
	"gitlab-token":    "glpat-" + strings.Repeat("a1B2c3D4e5", 2),
	"google-api-key":  "AIza" + strings.Repeat("Sy1234567", 3) + "abcdefgh",
	"stripe-key":      "sk_live_" + strings.Repeat("a1b2c3d4", 2),
	"jwt":             "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXBhcnQ",
	"pem-private-key": "-----BEGIN PRIVATE KEY-----",
	"high-entropy":    "Zx8Qp2Lm7Vr4Tn9Ks1Wd6Hy3Bf5Gc0JqR8uE2aP4",
}

func TestParseAddRefusesSecrets(t *testing.T) {
	t.Parallel()
	for rule, v := range fakeSecrets {
		t.Run(rule, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAdd([]string{"x", "npx", "pkg"}, 1, "", []string{"CONFIG=" + v}, nil)
			var oe *Error
			if !errors.As(err, &oe) || oe.Kind != Usage {
				t.Fatalf("--env CONFIG=<%s> accepted: %v", rule, err)
			}
			if strings.Contains(err.Error(), v) || strings.Contains(strings.Join(hintTexts(oe), "\n"), v) {
				t.Errorf("the refusal quotes the secret: %v %v", err, hintTexts(oe))
			}
			if diff := cmp.Diff([]string{"--env 'CONFIG=${CONFIG}'"}, hintTexts(oe)); diff != "" {
				t.Errorf("hint (-want +got):\n%s", diff)
			}
			// The same value as a command argument.
			if _, err := ParseAdd([]string{"x", "npx", "pkg", v}, 1, "", nil, nil); err == nil {
				t.Errorf("argument <%s> accepted", rule)
			}
		})
	}
}

func TestParseAdd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		dash    int
		url     string
		env     []string
		headers []string
		want    string // "" accepted; else a substring of the error
		hint    string
	}{
		{name: "command", args: []string{"a", "npx", "-y", "pkg"}, dash: 1},
		{name: "url", args: []string{"a"}, dash: -1, url: "https://x.example/mcp"},
		{name: "loopback http", args: []string{"a"}, dash: -1, url: "http://127.0.0.1:3845/mcp"},
		{name: "reference env", args: []string{"a", "x"}, dash: 1, env: []string{"GITHUB_TOKEN=${GITHUB_TOKEN}"}},
		{name: "keyboard passes", args: []string{"a", "x"}, dash: 1, env: []string{"KEYBOARD_LAYOUT=us"}},
		{name: "bearer reference", args: []string{"a"}, dash: -1, url: "https://x.example", headers: []string{"Authorization: Bearer ${TOKEN}"}},
		{name: "credential name", args: []string{"a", "x"}, dash: 1, env: []string{"API_TOKEN=abc"}, want: "API_TOKEN names a credential", hint: "--env 'API_TOKEN=${API_TOKEN}'"},
		{name: "bearer literal", args: []string{"a"}, dash: -1, url: "https://x.example", headers: []string{"Authorization: Bearer abcdef123456"}, want: "Authorization", hint: "--header 'Authorization: Bearer ${AUTHORIZATION}'"},
		{name: "plain http", args: []string{"a"}, dash: -1, url: "http://example.com/mcp", want: "loopback"},
		{name: "userinfo", args: []string{"a"}, dash: -1, url: "https://u:p@example.com/mcp", want: "credentials"},
		{name: "scheme", args: []string{"a"}, dash: -1, url: "ftp://example.com", want: "scheme"},
		{name: "both", args: []string{"a", "x"}, dash: 1, url: "https://x", want: "not both"},
		{name: "neither", args: []string{"a"}, dash: -1, want: "give --url"},
		{name: "no name", args: []string{"npx"}, dash: 0, want: "NAME first"},
		{name: "command without dash", args: []string{"a", "npx"}, dash: -1, want: "after --"},
		{name: "bad name", args: []string{"a b", "x"}, dash: 1, want: "server name"},
		{name: "control name", args: []string{"a\x01", "x"}, dash: 1, want: "control"},
		{name: "header on command", args: []string{"a", "x"}, dash: 1, headers: []string{"X-A: b"}, want: "--header applies"},
		{name: "env on url", args: []string{"a"}, dash: -1, url: "https://x", env: []string{"A=b"}, want: "--env applies"},
		{name: "env syntax", args: []string{"a", "x"}, dash: 1, env: []string{"novalue"}, want: "NAME=VALUE"},
		{name: "env twice", args: []string{"a", "x"}, dash: 1, env: []string{"A=1", "A=2"}, want: "twice"},
		{name: "header syntax", args: []string{"a"}, dash: -1, url: "https://x", headers: []string{"nocolon"}, want: "--header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAdd(tt.args, tt.dash, tt.url, tt.env, tt.headers)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			var oe *Error
			if !errors.As(err, &oe) || oe.Kind != Usage {
				t.Fatalf("err %v is not a usage error", err)
			}
			if tt.hint != "" && !cmp.Equal([]string{tt.hint}, hintTexts(oe)) {
				t.Errorf("hints = %q, want %q", hintTexts(oe), tt.hint)
			}
		})
	}
}

// hintTexts are a refusal's hints in words.
func hintTexts(e *Error) []string {
	var out []string
	for _, h := range e.Hints {
		out = append(out, h.Render("piagent-mcp"))
	}
	return out
}

func TestEntryJSON(t *testing.T) {
	t.Parallel()
	req, err := ParseAdd([]string{"gh", "npx", "-y", "@acme/gh mcp", "it's"}, 1, "", []string{"Z=1", "A=${A}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(req.EntryJSON()), `{"command":"npx","args":["-y","@acme/gh mcp","it's"],"env":{"Z":"1","A":"${A}"}}`; got != want {
		t.Errorf("EntryJSON = %s, want %s", got, want)
	}
	req, _ = ParseAdd([]string{"s"}, -1, "https://x.example/mcp", nil, []string{"Authorization: Bearer ${T}"})
	if got, want := string(req.EntryJSON()), `{"url":"https://x.example/mcp","headers":{"Authorization":"Bearer ${T}"}}`; got != want {
		t.Errorf("EntryJSON = %s, want %s", got, want)
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	req, err := ParseAdd([]string{"gh", "npx", "-y", "@acme/gh mcp", "it's"}, 1, "", []string{"Z=1", "A=${A}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := req.CommandLine("piagent-mcp", ScopeFile{Scope: "project", Repository: true}, "/work/my proj", true)
	want := `piagent-mcp add gh --scope project --project '/work/my proj' --replace --env Z=1 --env 'A=${A}' -- npx -y '@acme/gh mcp' 'it'\''s'`
	if got != want {
		t.Errorf("commandLine =\n%s\nwant\n%s", got, want)
	}
	req, _ = ParseAdd([]string{"s"}, -1, "https://x.example/mcp", nil, []string{"Authorization: Bearer ${T}"})
	got = req.CommandLine("piagent mcp", ScopeFile{Scope: "global"}, "/p", false)
	if want := `piagent mcp add s --scope global --header 'Authorization: Bearer ${T}' --url https://x.example/mcp`; got != want {
		t.Errorf("commandLine =\n%s\nwant\n%s", got, want)
	}
}
