package secret

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckEnvSeedExample(t *testing.T) {
	t.Parallel()
	err := CheckEnv("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_xxx")
	want := &Refusal{
		Field:  FieldEnv,
		Name:   "GITHUB_PERSONAL_ACCESS_TOKEN",
		Rule:   "name:token",
		Reason: "GITHUB_PERSONAL_ACCESS_TOKEN names a credential, so its value cannot be written into MCP config. Export it in your shell and reference it instead:",
		Hint:   "--env 'GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_PERSONAL_ACCESS_TOKEN}'",
	}
	var got *Refusal
	if !errors.As(err, &got) {
		t.Fatalf("CheckEnv = %v, want a *Refusal", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if !errors.Is(err, ErrRefused) {
		t.Errorf("errors.Is(err, ErrRefused) = false")
	}
	if got, want := err.Error(), want.Reason+" "+want.Hint; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCheckEnvValueUnderInnocentName(t *testing.T) {
	t.Parallel()
	err := CheckEnv("CONFIG", fakeGHP)
	want := &Refusal{
		Field:  FieldEnv,
		Name:   "CONFIG",
		Rule:   "value:github-token",
		Reason: "the value of CONFIG looks like a GitHub token, so its value cannot be written into MCP config. Export it in your shell and reference it instead:",
		Hint:   "--env 'CONFIG=${CONFIG}'",
	}
	var got *Refusal
	if !errors.As(err, &got) {
		t.Fatalf("CheckEnv = %v, want a *Refusal", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), fakeGHP) {
		t.Errorf("refusal quotes the secret")
	}
}

func TestCheckEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		rule        string // "" when accepted
		hint        string
	}{
		{"GITHUB_TOKEN", "${GITHUB_TOKEN}", "", ""},
		{"GITHUB_TOKEN", "$env:GH", "", ""},
		{"GITHUB_TOKEN", "{env:GH}", "", ""},
		{"GITHUB_TOKEN", "", "", ""},
		{"AUTH_HEADER", "Bearer ${TOKEN}", "", ""},
		{"DB_CREDENTIALS", "${DB_USER}:${DB_PASS}", "", ""},
		{"GITHUB_TOKEN", "!gh auth token", "", ""},
		{"GITHUB_TOKEN", "!echo " + fakeGHP, "value:github-token", ""},
		{"GITHUB_TOKEN", "!!literal", "name:token", "--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'"},
		{"GITHUB_TOKEN", "prefix-${GITHUB_TOKEN}", "name:token", "--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'"},
		{"OPENAI_API_KEY", "hunter2", "name:key", "--env 'OPENAI_API_KEY=${OPENAI_API_KEY}'"},
		{"AUTH_HEADER", "Bearer abc", "name:auth", "--env 'AUTH_HEADER=Bearer ${AUTH_HEADER}'"},
		{"my.api-key", "x", "name:key", "--env 'my.api-key=${MY_API_KEY}'"},
		{"it's_a_token", "x", "name:token", `--env 'it'\''s_a_token=${IT_S_A_TOKEN}'`},
		{"CONFIG", fakeOpenAIPrj, "value:openai-key", "--env 'CONFIG=${CONFIG}'"},
		{"DATABASE_URL", "postgres://app:" + fakePassword + "@db/app", "value:url-credentials", "--env 'DATABASE_URL=${DATABASE_URL}'"},
		{"SSH", fakeOpenSSH, "value:pem-private-key", "--env 'SSH=${SSH}'"},
		{"KEYBOARD_LAYOUT", "us", "", ""},
		{"NODE_OPTIONS", "--max-old-space-size=4096", "", ""},
		{"CHROME_PATH", "/usr/bin/google-chrome", "", ""},
		{"TOKEN_URL", "https://auth.example.com/token", "", ""},
		{"CONTEXT7_WORKSPACE", fakeUUID(200), "", ""},
		{"GIT_COMMIT", fake(201, hexChars, 40), "", ""},
	}
	for _, tt := range tests {
		err := CheckEnv(tt.name, tt.value)
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Errorf("CheckEnv(%s) = %v, not a *Refusal", tt.name, err)
			continue
		}
		gotRule, gotHint := "", ""
		if r != nil {
			gotRule, gotHint = r.Rule, r.Hint
			if r.Field != FieldEnv || r.Name != tt.name {
				t.Errorf("CheckEnv(%s): field %q name %q", tt.name, r.Field, r.Name)
			}
			if tt.value != "" && len(tt.value) > 3 && strings.Contains(r.Error(), tt.value) {
				t.Errorf("CheckEnv(%s): refusal quotes the value", tt.name)
			}
		}
		if gotRule != tt.rule || gotHint != tt.hint {
			t.Errorf("CheckEnv(%s, %d-byte value) = rule %q hint %q, want %q %q", tt.name, len(tt.value), gotRule, gotHint, tt.rule, tt.hint)
		}
	}
}

func TestCheckHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		rule        string
		hint        string
	}{
		{"Authorization", "Bearer ${TOKEN}", "", ""},
		{"Authorization", "bearer ${TOKEN}", "", ""},
		{"Authorization", "${AUTH}", "", ""},
		{"Authorization", "Basic ${BASIC}", "", ""},
		{"Authorization", "Bearer abc123", "name:auth", "--header 'Authorization: Bearer ${AUTHORIZATION}'"},
		{"Authorization", "Bearer " + fakeGHP, "name:auth", "--header 'Authorization: Bearer ${AUTHORIZATION}'"},
		{"Authorization", "token " + fakeGHP, "name:auth", "--header 'Authorization: token ${AUTHORIZATION}'"},
		{"Authorization", "abc", "name:auth", "--header 'Authorization: ${AUTHORIZATION}'"},
		{"X-API-Key", "abc", "name:key", "--header 'X-API-Key: ${X_API_KEY}'"},
		{"Cookie", "sid=abc", "name:cookie", "--header 'Cookie: ${COOKIE}'"},
		{"X-Custom", "Bearer abcdef123456", "value:bearer-token", "--header 'X-Custom: Bearer ${X_CUSTOM}'"},
		{"X-Custom", fakeSlackBot, "value:slack-token", "--header 'X-Custom: ${X_CUSTOM}'"},
		{"X-Figma-Region", "us-east-1", "", ""},
		{"Accept", "application/json, text/event-stream", "", ""},
		{"X-Request-Id", fakeUUID(210), "", ""},
	}
	for _, tt := range tests {
		err := CheckHeader(tt.name, tt.value)
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Errorf("CheckHeader(%s) = %v, not a *Refusal", tt.name, err)
			continue
		}
		gotRule, gotHint := "", ""
		if r != nil {
			gotRule, gotHint = r.Rule, r.Hint
			if r.Field != FieldHeader {
				t.Errorf("CheckHeader(%s): field %q", tt.name, r.Field)
			}
		}
		if gotRule != tt.rule || gotHint != tt.hint {
			t.Errorf("CheckHeader(%s) = rule %q hint %q, want %q %q", tt.name, gotRule, gotHint, tt.rule, tt.hint)
		}
	}
}

func TestParseHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in          string
		name, value string
		bad         bool
	}{
		{in: "Authorization: Bearer ${TOKEN}", name: "Authorization", value: "Bearer ${TOKEN}"},
		{in: "X-Api-Key:${KEY}", name: "X-Api-Key", value: "${KEY}"},
		{in: "X:  a:b  ", name: "X", value: "a:b"},
		{in: "X:\tv\t", name: "X", value: "v"},
		{in: "X-Empty:", name: "X-Empty", value: ""},
		{in: "!#$%&'*+-.^_`|~09az: v", name: "!#$%&'*+-.^_`|~09az", value: "v"},
		{in: "no colon", bad: true},
		{in: ": value", bad: true},
		{in: "Name : value", bad: true},
		{in: " Name: value", bad: true},
		{in: "Na(me: value", bad: true},
		{in: "Name: va\r\nlue", bad: true},
		{in: "Name: value\n", bad: true},
		{in: "Na\nme: value", bad: true},
		{in: "Name: va\x00lue", bad: true},
		{in: "Name: va\x7flue", bad: true},
		{in: "Nämé: value", bad: true},
	}
	for _, tt := range tests {
		name, value, err := ParseHeader(tt.in)
		if tt.bad {
			if err == nil || !errors.Is(err, ErrHeader) {
				t.Errorf("ParseHeader(%q) error = %v, want ErrHeader", tt.in, err)
			}
			continue
		}
		if err != nil || name != tt.name || value != tt.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v; want %q, %q", tt.in, name, value, err, tt.name, tt.value)
		}
	}
	// Errors never quote the value.
	if _, _, err := ParseHeader(fakeGHP); err == nil || strings.Contains(err.Error(), fakeGHP) {
		t.Errorf("ParseHeader(token) error = %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		rule string
		name string
		hint string
	}{
		{url: "https://mcp.context7.com/mcp"},
		{url: "HTTPS://MCP.EXAMPLE.COM/mcp"},
		{url: "https://api.githubcopilot.com/mcp/"},
		{url: "http://127.0.0.1:3845/mcp"},
		{url: "http://127.9.8.7/mcp"},
		{url: "http://localhost:8080/mcp"},
		{url: "http://LOCALHOST./mcp"},
		{url: "http://[::1]:3000/mcp"},
		{url: "http://[::ffff:127.0.0.1]:3000/mcp"},
		{url: "https://${MCP_HOST}/mcp"},
		{url: "https://mcp.example.com/mcp?api_key=${API_KEY}"},
		{url: "https://mcp.example.com/mcp?key=$env:KEY&region=eu"},
		{url: "https://www.figma.com/mcp?node-id=12-34"},
		{url: "https://example.com/search?q=" + fakeUUID(220)},
		{url: "http://example.com/mcp", rule: "url:plain-http"},
		{url: "http://127.0.0.1.nip.io/mcp", rule: "url:plain-http"},
		{url: "http://0.0.0.0:3845/mcp", rule: "url:plain-http"},
		{url: "http://[::2]/mcp", rule: "url:plain-http"},
		{url: "http://${HOST}/mcp", rule: "url:plain-http"},
		{url: "http://localhost.evil.com/", rule: "url:plain-http"},
		{url: "ftp://example.com/x", rule: "url:scheme"},
		{url: "file:///etc/passwd", rule: "url:no-host"},
		{url: "ws://localhost/x", rule: "url:scheme"},
		{url: "${SCHEME}://localhost/x", rule: "url:scheme"},
		{url: "javascript:alert(1)", rule: "url:no-host"},
		{url: "mcp.example.com/mcp", rule: "url:no-host"},
		{url: "https://", rule: "url:no-host"},
		{url: "https://:443/x", rule: "url:no-host"},
		{url: "", rule: "url:no-host"},
		{url: "https://exa mple.com/", rule: "url:invalid"},
		{url: "https://example.com/\n", rule: "url:invalid"},
		{url: "https://[::1/", rule: "url:invalid"},
		{url: "https://user:" + fakePassword + "@example.com/", rule: "url:userinfo", hint: "--header 'Authorization: Bearer ${TOKEN}'"},
		{url: "https://" + fakeGHP + "@example.com/", rule: "url:userinfo", hint: "--header 'Authorization: Bearer ${TOKEN}'"},
		{url: "https://${U}:${P}@example.com/", rule: "url:userinfo", hint: "--header 'Authorization: Bearer ${TOKEN}'"},
		{url: "https://mcp.example.com/mcp?api_key=abc", rule: "url:query", name: "api_key", hint: "--url 'https://mcp.example.com/mcp?api_key=${API_KEY}'"},
		{url: "https://mcp.example.com/mcp?x=1&config=" + fakeOpenAI, rule: "url:query", name: "config", hint: "--url 'https://mcp.example.com/mcp?config=${CONFIG}'"},
		{url: "https://mcp.example.com/" + fakeRandom64 + "/mcp", rule: "url:path"},
		{url: "https://mcp.example.com/mcp#" + fakeGLPAT, rule: "url:path"},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url)
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Errorf("CheckURL(%q) = %v, not a *Refusal", tt.url, err)
			continue
		}
		var got struct{ rule, name, hint string }
		if r != nil {
			got.rule, got.name, got.hint = r.Rule, r.Name, r.Hint
			if r.Field != FieldURL {
				t.Errorf("CheckURL(%q): field %q", tt.url, r.Field)
			}
			if strings.Contains(r.Error(), fakePassword) || strings.Contains(r.Error(), fakeOpenAI) || strings.Contains(r.Error(), fakeGHP) {
				t.Errorf("CheckURL(%q): refusal quotes a secret", tt.url)
			}
		}
		if got.rule != tt.rule || got.name != tt.name || got.hint != tt.hint {
			t.Errorf("CheckURL(%q) = %+v, want rule %q name %q hint %q", tt.url, got, tt.rule, tt.name, tt.hint)
		}
	}
}
