package secret

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

type corpusCase struct {
	name  string
	value string
	rule  string // "" for a benign sample
}

func b64(s string) string    { return base64.StdEncoding.EncodeToString([]byte(s)) }
func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// corpus is every token format SecretValue knows, plus realistic values
// that must not be mistaken for secrets.
func corpus() []corpusCase {
	return []corpusCase{
		// Secrets.
		{"github ghp", fakeGHP, RuleGitHubToken},
		{"github gho", fakeGHO, RuleGitHubToken},
		{"github ghs", fakeGHS, RuleGitHubToken},
		{"github ghu", fakeGHU, RuleGitHubToken},
		{"github ghr", fakeGHR, RuleGitHubToken},
		{"github fine-grained pat", fakeGitHubPAT, RuleGitHubPAT},
		{"github token in git url", "https://x-access-token:" + fakeGHS + "@github.com/acme/repo.git", RuleGitHubToken},
		{"openai legacy", fakeOpenAI, RuleOpenAIKey},
		{"openai project", fakeOpenAIPrj, RuleOpenAIKey},
		{"openai service account", "sk-svcacct-" + fake(40, b64URL, 120), RuleOpenAIKey},
		{"openai in flag", "--api-key=" + fakeOpenAI, RuleOpenAIKey},
		{"anthropic", fakeAnthropic, RuleAnthropicKey},
		{"aws akia", fakeAKIA, RuleAWSAccessKeyID},
		{"aws asia", fakeASIA, RuleAWSAccessKeyID},
		{"aws secret access key", fakeAWSSecret, RuleHighEntropy},
		{"slack bot", fakeSlackBot, RuleSlackToken},
		{"slack user", fakeSlackUser, RuleSlackToken},
		{"slack webhook", fakeSlackHook, RuleSlackWebhook},
		{"gitlab", fakeGLPAT, RuleGitLabToken},
		{"google", fakeGoogle, RuleGoogleAPIKey},
		{"stripe live", fakeStripe, RuleStripeKey},
		{"stripe restricted", fakeStripeRK, RuleStripeKey},
		{"stripe test", fakeStripeT, RuleStripeKey},
		{"npm", fakeNPM, RuleNPMToken},
		{"jwt", fakeJWTValue, RuleJWT},
		{"jwt alg none", b64url(`{"alg":"none"}`) + "." + b64url(`{"sub":"42"}`) + ".", RuleJWT},
		{"pem rsa", fakeRSA, RulePEMPrivateKey},
		{"pem openssh", fakeOpenSSH, RulePEMPrivateKey},
		{"pem pkcs8", fakePKCS8, RulePEMPrivateKey},
		{"pem ec", fakeEC, RulePEMPrivateKey},
		{"pem escaped in json", `"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"`, RulePEMPrivateKey},
		{"postgres url password", "postgres://app:" + fakePassword + "@db.internal:5432/app", RuleURLCredentials},
		{"https url password", "https://deploy:" + fakePassword + "@git.example.com/repo.git", RuleURLCredentials},
		{"bearer literal", "Bearer abc123def456ghi", RuleBearerToken},
		{"bearer lower case", "bearer 9f8e7d6c5b4a", RuleBearerToken},
		{"basic literal", "Basic " + b64("alice:wonderland"), RuleBasicAuth},
		{"random base62 32", fakeRandom32, RuleHighEntropy},
		{"random base64url 64", fakeRandom64, RuleHighEntropy},
		{"random hex-looking but mixed", fake(41, alnumChars, 40), RuleHighEntropy},
		{"random base64 of bytes", base64.StdEncoding.EncodeToString(fakeBytes(42, 48)), RuleHighEntropy},
		{"azure-like key", fake(43, b64Chars, 86) + "==", RuleHighEntropy},
		{"secret after equals", "client_secret=" + fake(44, alnumChars, 40), RuleHighEntropy},

		// Benign.
		{"path unix", "/usr/local/lib/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", ""},
		{"path windows", `C:\Users\Alice\AppData\Roaming\npm\node_modules\@playwright\mcp\cli.js`, ""},
		{"path camel", "/home/user/Projects/MyAwesomeProject2024/src/components/HeaderNavigation", ""},
		{"path go", "./internal/secret/values_test.go", ""},
		{"path home", "~/.config/gh/hosts.yml", ""},
		{"path long segments", "/Users/alice/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings", ""},
		{"uuid", fakeUUID(50), ""},
		{"uuid upper", "F47AC10B-58CC-4372-A567-0E02B2C3D479", ""},
		{"uuid no dashes", fake(51, hexChars, 32), ""},
		{"git sha", fake(52, hexChars, 40), ""},
		{"git sha short", fake(53, hexChars, 7), ""},
		{"sha256 hex", hex.EncodeToString(fakeBytes(54, 32)), ""},
		{"docker digest", "ghcr.io/github/github-mcp-server@sha256:" + hex.EncodeToString(fakeBytes(55, 32)), ""},
		{"sri integrity", "sha512-" + base64.StdEncoding.EncodeToString(fakeBytes(56, 64)), ""},
		{"base64 text", b64("The quick brown fox jumps over the lazy dog and keeps on running."), ""},
		{"base64url text", b64url("Hello, world! This is a perfectly ordinary sentence."), ""},
		{"base64 json", b64(`{"name":"demo-server","version":"1.0.0","private":true}`), ""},
		{"base64 yaml", b64("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n"), ""},
		{"package disk-usage", "@acme/disk-usage", ""},
		{"package risk", "risk-analyzer-sk-tools", ""},
		{"package context7", "@upstash/context7-mcp@3.2.4", ""},
		{"package sk- kebab", "sk-learn-contrib-imbalanced-sampling", ""},
		{"package whisk", "@scope/whisk-tools-2024", ""},
		{"package desk", "desk-booking-mcp-server", ""},
		{"npm env name", "npm_config_registry", ""},
		{"go module", "golang.org/x/term@v0.48.0", ""},
		{"url context7", "https://mcp.context7.com/mcp", ""},
		{"url figma desktop", "http://127.0.0.1:3845/mcp", ""},
		{"url github tree", "https://github.com/modelcontextprotocol/servers/tree/main/src/filesystem", ""},
		{"url figma file", "https://www.figma.com/file/AbC123xyzQ/Design-System?node-id=12-34", ""},
		{"url user only", "ssh://git@github.com/acme/repo.git", ""},
		{"scp-like", "git@github.com:acme/repo.git", ""},
		{"url port", "https://example.com:8443/path@v1", ""},
		{"url masked password", "https://user:****@example.com/", ""},
		{"url referenced password", "https://user:${DB_PASS}@example.com/", ""},
		{"semver", "1.2.3-beta.4+build.20240101", ""},
		{"semver v", "v0.86.1", ""},
		{"english", "Please export your token in the shell before running the server.", ""},
		{"english bearer", "Bearer tokens are described in RFC 6750.", ""},
		{"english basic", "Basic understanding of the key concepts is required.", ""},
		{"env name", "GITHUB_PERSONAL_ACCESS_TOKEN", ""},
		{"reference", "${GITHUB_TOKEN}", ""},
		{"bearer reference", "Bearer ${GITHUB_TOKEN}", ""},
		{"identifier camel", "MyApplicationConfigurationManagerFactory2024", ""},
		{"identifier java", "com.example.myapplication.MainActivity", ""},
		{"identifier upper snake", "AWS_IAM_ROLE_POLICY_ATTACHMENT_LAMBDA_2024", ""},
		{"pod name", "kubernetes-dashboard-7d8f9c6b5-x2k4j", ""},
		{"arn", "arn:aws:iam::123456789012:role/MyRoleName", ""},
		{"stripe publishable", "pk_live_" + fake(57, alnumChars, 24), ""},
		{"github near miss", "ghp_" + fake(58, alnumChars, 20), ""},
		{"jwt header only", b64url(`{"alg":"HS256"}`), ""},
		{"dotted not jwt", "eyJustkidding.not-a.token", ""},
		{"email", "alice@example.com", ""},
		{"chrome flag", "--user-data-dir=/tmp/chrome-profile", ""},
		{"docker image", "mcr.microsoft.com/playwright:v1.49.0-noble", ""},
		{"timestamp", "2026-07-28T12:34:56.789Z", ""},
		{"css class list", "flex items-center justify-between px-4 py-2 text-sm", ""},
		{"base58-ish short", "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"[:30], ""},
		{"terraform address", "module.network.aws_subnet.private_subnet_2a", ""},
		{"long camel with digits", "getUserProfileSettingsForAccountV2AndRegion3", ""},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----", ""},
		{"certificate", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----", ""},
		{"data path hash dir", "/var/lib/docker/overlay2/" + fake(59, hexChars, 64) + "/merged", ""},
		{"go sum line", "golang.org/x/sys v0.50.0 h1:" + base64.StdEncoding.EncodeToString(fakeBytes(60, 32)), ""},
		{"ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + base64.StdEncoding.EncodeToString(fakeBytes(61, 32)) + " alice@laptop", ""},
		{"ssh rsa public key", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + base64.StdEncoding.EncodeToString(fakeBytes(62, 256)) + " bob@host", ""},
		{"known_hosts line", "github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + base64.StdEncoding.EncodeToString(fakeBytes(63, 64)), ""},
	}
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	var secrets, secretsHit, benign, benignPass int
	for _, c := range corpus() {
		got, ok := SecretValue(c.value)
		if !ok {
			got = ""
		}
		if c.rule != "" {
			secrets++
			if got == c.rule {
				secretsHit++
			}
		} else {
			benign++
			if got == "" {
				benignPass++
			}
		}
		if got != c.rule {
			t.Errorf("%s: SecretValue rule = %q, want %q", c.name, got, c.rule)
		}
	}
	t.Logf("corpus: %d/%d secret samples detected with the expected rule, %d/%d benign samples passed", secretsHit, secrets, benignPass, benign)
}
