package secret

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		want  string
		rules []string
	}{
		{
			name: "dotenv dump",
			in: "# local settings\n" +
				"NODE_ENV=development\n" +
				"DATABASE_URL=postgres://app:" + fakePassword + "@localhost:5432/app\n" +
				"GITHUB_TOKEN=" + fakeGHP + "\n" +
				"export OPENAI_API_KEY=\"" + fakeOpenAI + "\"\n" +
				"SESSION_SECRET='correct horse battery staple'\n" +
				"DB_PASSWORD=hunter2 # do not commit\n" +
				"API_KEY=\n" +
				"TOKEN_URL=https://auth.example.com/token\n" +
				"STRIPE_KEY=${STRIPE_KEY}\n" +
				"PORT=3000\n",
			want: "# local settings\n" +
				"NODE_ENV=development\n" +
				"DATABASE_URL=postgres://app:[REDACTED:url-credentials]@localhost:5432/app\n" +
				"GITHUB_TOKEN=[REDACTED:github-token]\n" +
				"export OPENAI_API_KEY=\"[REDACTED:openai-key]\"\n" +
				"SESSION_SECRET='[REDACTED:session]'\n" +
				"DB_PASSWORD=[REDACTED:password] # do not commit\n" +
				"API_KEY=\n" +
				"TOKEN_URL=https://auth.example.com/token\n" +
				"STRIPE_KEY=${STRIPE_KEY}\n" +
				"PORT=3000\n",
			rules: []string{"url-credentials", "github-token", "openai-key", "session", "password"},
		},
		{
			name: "curl -v",
			in: "*   Trying 203.0.113.7:443...\n" +
				"> GET /v1/models HTTP/2\n" +
				"> Host: api.example.com\n" +
				"> Authorization: Bearer " + fakeRandom64 + "\n" +
				"> X-Api-Key: plainkey\n" +
				"> User-Agent: curl/8.5.0\n" +
				"> Accept: */*\n" +
				"< HTTP/2 200\n" +
				"< set-cookie: session=abc123; Path=/; HttpOnly\n" +
				"< content-type: application/json\n",
			want: "*   Trying 203.0.113.7:443...\n" +
				"> GET /v1/models HTTP/2\n" +
				"> Host: api.example.com\n" +
				"> Authorization: Bearer [REDACTED:bearer-token]\n" +
				"> X-Api-Key: [REDACTED:key]\n" +
				"> User-Agent: curl/8.5.0\n" +
				"> Accept: */*\n" +
				"< HTTP/2 200\n" +
				"< set-cookie: [REDACTED:cookie]\n" +
				"< content-type: application/json\n",
			rules: []string{"bearer-token", "key", "cookie"},
		},
		{
			name: "curl command line",
			in:   "curl -sS -H 'Authorization: Basic " + b64("alice:s3cret-pw") + "' https://api.example.com/x",
			want: "curl -sS -H 'Authorization: Basic [REDACTED:basic-credentials]' https://api.example.com/x",
			rules: []string{
				"basic-credentials",
			},
		},
		{
			name: "json with password",
			in: "{\n" +
				"  \"user\": \"alice\",\n" +
				"  \"password\": \"p@ss w0rd\\\"quoted\",\n" +
				"  \"apiKey\": \"" + fakeGoogle + "\",\n" +
				"  \"token\": null,\n" +
				"  \"auth\": {\"type\": \"oauth\"},\n" +
				"  \"clientSecret\":\"abc\",\"next\":1\n" +
				"}",
			want: "{\n" +
				"  \"user\": \"alice\",\n" +
				"  \"password\": \"[REDACTED:password]\",\n" +
				"  \"apiKey\": \"[REDACTED:google-api-key]\",\n" +
				"  \"token\": null,\n" +
				"  \"auth\": {\"type\": \"oauth\"},\n" +
				"  \"clientSecret\":\"[REDACTED:secret]\",\"next\":1\n" +
				"}",
			rules: []string{"password", "google-api-key", "secret"},
		},
		{
			name: "git remote -v",
			in: "origin\thttps://x-access-token:" + fakeGHS + "@github.com/acme/app.git (fetch)\n" +
				"origin\thttps://x-access-token:" + fakeGHS + "@github.com/acme/app.git (push)\n" +
				"backup\thttps://bob:" + fakePassword + "@gitlab.example.com/acme/app.git (fetch)\n" +
				"mirror\tgit@github.com:acme/app.git (fetch)\n",
			want: "origin\thttps://x-access-token:[REDACTED:github-token]@github.com/acme/app.git (fetch)\n" +
				"origin\thttps://x-access-token:[REDACTED:github-token]@github.com/acme/app.git (push)\n" +
				"backup\thttps://bob:[REDACTED:url-credentials]@gitlab.example.com/acme/app.git (fetch)\n" +
				"mirror\tgit@github.com:acme/app.git (fetch)\n",
			rules: []string{"github-token", "github-token", "url-credentials"},
		},
		{
			name:  "private key file",
			in:    "$ cat key.pem\n" + fakeRSA + "\n$ echo done\ndone\n",
			want:  "$ cat key.pem\n[REDACTED:pem-private-key]\n$ echo done\ndone\n",
			rules: []string{"pem-private-key"},
		},
		{
			name:  "yaml",
			in:    "database:\n  host: db\n  password: my secret phrase\n  password_file: /run/secrets/db\nslack:\n  webhook: " + fakeSlackHook + "\n",
			want:  "database:\n  host: db\n  password: [REDACTED:password]\n  password_file: /run/secrets/db\nslack:\n  webhook: [REDACTED:slack-webhook]\n",
			rules: []string{"password", "slack-webhook"},
		},
		{
			name:  "command flags",
			in:    "ps: node server.js --token=abc123 --port=8080 --password hunter2",
			want:  "ps: node server.js --token=[REDACTED:token] --port=8080 --password hunter2",
			rules: []string{"token"},
		},
		{
			name: "source code stays readable",
			in: "const token = process.env.GITHUB_TOKEN;\n" +
				"password := cfg.Password\n" +
				"if token == \"\" { return }\n" +
				"func auth(token string) error {\n" +
				"  apiKey: apiKey,\n" +
				"  password: string;\n" +
				"url := \"https://example.com\"\n",
			want: "const token = process.env.GITHUB_TOKEN;\n" +
				"password := cfg.Password\n" +
				"if token == \"\" { return }\n" +
				"func auth(token string) error {\n" +
				"  apiKey: apiKey,\n" +
				"  password: string;\n" +
				"url := \"https://example.com\"\n",
		},
		{
			name: "grep output",
			in: "internal/auth/token.go:42:func ParseToken(s string) (Token, error) {\n" +
				"token.go:43:\treturn Token{}, nil\n" +
				"session.py: def login(password):\n" +
				".env.example:API_KEY=\n" +
				"config/app.yaml:12:  password: " + fakePassword + "\n",
			want: "internal/auth/token.go:42:func ParseToken(s string) (Token, error) {\n" +
				"token.go:43:\treturn Token{}, nil\n" +
				"session.py: def login(password):\n" +
				".env.example:API_KEY=\n" +
				"config/app.yaml:12:  password: [REDACTED:password]\n",
			rules: []string{"password"},
		},
		{
			name: "nothing to redact",
			in:   "commit " + fake(400, hexChars, 40) + "\nAuthor: Alice <alice@example.com>\n\n    Fix the " + fakeUUID(401) + " lookup\n",
			want: "commit " + fake(400, hexChars, 40) + "\nAuthor: Alice <alice@example.com>\n\n    Fix the " + fakeUUID(401) + " lookup\n",
		},
		{
			name:  "jwt in log",
			in:    "level=info msg=\"issued\" jwt=" + fakeJWTValue + " user=alice",
			want:  "level=info msg=\"issued\" jwt=[REDACTED:jwt] user=alice",
			rules: []string{"jwt"},
		},
	}
	for _, tt := range tests {
		got, findings := Redact(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Redact (-want +got):\n%s", tt.name, diff)
		}
		var rules []string
		for _, f := range findings {
			rules = append(rules, f.Rule)
			if !strings.HasPrefix(got[f.Offset:], Marker(f.Rule)) {
				t.Errorf("%s: finding %+v does not point at its marker", tt.name, f)
			}
		}
		if diff := cmp.Diff(tt.rules, rules); diff != "" {
			t.Errorf("%s: finding rules (-want +got):\n%s", tt.name, diff)
		}
		if again, more := Redact(got); again != got || len(more) != 0 {
			t.Errorf("%s: Redact is not idempotent", tt.name)
		}
	}
}
