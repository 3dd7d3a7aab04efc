package secret

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCredentialName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rule string // "" when the name passes
	}{
		{"GITHUB_PERSONAL_ACCESS_TOKEN", "token"},
		{"GITHUB_TOKEN", "token"},
		{"token", "token"},
		{"HF_TOKENS", "token"},
		{"accessToken", "token"},
		{"ACCESSTOKEN", "token"},
		{"OAuthToken", "token"},
		{"SUPABASE_JWT", "token"},
		{"TOKENIZER_PATH", ""},
		{"CLIENT_SECRET", "secret"},
		{"clientSecret", "secret"},
		{"SECRETARY_NAME", ""},
		{"DB_PASSWORD", "password"},
		{"MYSQL_PASSWD", "password"},
		{"PGPASS", ""}, // one word, not "pass"
		{"DB_PASS", "password"},
		{"gpg-passphrase", "password"},
		{"PASSENGER_COUNT", ""},
		{"BYPASS_CACHE", ""},
		{"OPENAI_API_KEY", "key"},
		{"apiKey", "key"},
		{"APIKey", "key"},
		{"APIKEY", "key"},
		{"X-API-Key", "key"},
		{"x-api-key", "key"},
		{"PRIVATE_KEY", "key"},
		{"privateKey", "key"},
		{"S3_KEY2", "key"},
		{"KEYBOARD_LAYOUT", ""},
		{"MONKEY", ""},
		{"HOTKEY", ""},
		{"Authorization", "auth"},
		{"Proxy-Authorization", "auth"},
		{"BASIC_AUTH", "auth"},
		{"AUTHOR", ""},
		{"AUTHOR_EMAIL", ""},
		{"OAUTH", ""},
		{"GOOGLE_APPLICATION_CREDENTIALS", "credential"},
		{"AWS_CREDS", "credential"},
		{"GITHUB_PAT", "pat"},
		{"PATH", ""},
		{"PATTERN", ""},
		{"BEARER", "bearer"},
		{"SESSION_ID", "session"},
		{"sessionId", "session"},
		{"Cookie", "cookie"},
		{"Set-Cookie", "cookie"},
		{"COOKIECUTTER_CONFIG", ""},

		// A qualifier as the last word names something about a credential.
		{"TOKEN_URL", ""},
		{"AUTH_TOKEN_ENDPOINT", ""},
		{"PASSWORD_FILE", ""},
		{"bearerTokenEnv", ""},
		{"SESSION_TIMEOUT", ""},
		{"GIT_CREDENTIAL_HELPER", ""},
		{"API_KEY_NAME", ""},
		{"TOKEN_URL_SECRET", "token"},

		{"", ""},
		{"___", ""},
		{"NODE_OPTIONS", ""},
		{"DEBUG", ""},
		{"HOME", ""},
		{"CHROME_PATH", ""},
	}
	for _, tt := range tests {
		got, ok := CredentialName(tt.name)
		if ok != (got != "") {
			t.Errorf("CredentialName(%q) = %q, %v", tt.name, got, ok)
		}
		if got != tt.rule {
			t.Errorf("CredentialName(%q) rule = %q, want %q", tt.name, got, tt.rule)
		}
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"GITHUB_PERSONAL_ACCESS_TOKEN": {"github", "personal", "access", "token"},
		"apiKey":                       {"api", "key"},
		"APIKey":                       {"api", "key"},
		"XMLHttpRequest":               {"xml", "http", "request"},
		"OAuthToken":                   {"oauth", "token"},
		"key2":                         {"key"},
		"S3Bucket":                     {"s", "bucket"},
		"a.b-c d":                      {"a", "b", "c", "d"},
		"123":                          nil,
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitWords(in)); diff != "" {
			t.Errorf("splitWords(%q) (-want +got):\n%s", in, diff)
		}
	}
}
