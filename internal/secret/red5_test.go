package secret

import (
	"strings"
	"testing"
)

// TestRed5PasswordsOfReadableSettings: the settings files tools may read
// (start-up files, readable, never written) that hold passwords, read for
// the model by Pi's read tool with only this redaction in the way: maven's
// ~/.m2/settings.xml keeps a server's password in an element, which no
// rule read (the whole password shown); gradle's gradle.properties keeps
// signing.password=…, whose value ended at the first "&" (a URL query's
// separator), so the rest of a password with one was shown.
func TestRed5PasswordsOfReadableSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, secret string }{
		{"<servers>\n  <server>\n    <id>ossrh</id>\n    <username>deploy</username>\n    <password>Tr0ub4dor3x</password>\n  </server>\n</servers>\n", "Tr0ub4dor3x"},
		{"<server><id>x</id><passphrase>correct-horse-battery</passphrase></server>", "correct-horse-battery"},
		{"<proxy><password>pr0xyPass!</password></proxy>", "pr0xyPass!"},
		{"signing.password=Tr0ub4dor&3x\n", "&3x"},
		{"ossrhPassword=a&b&c9f8e7d\n", "c9f8e7d"},
		{"DB_PASSWORD=p&ss-w0rd-tail\n", "ss-w0rd-tail"},
	} {
		out, _ := Redact(c.in)
		if strings.Contains(out, c.secret) {
			t.Errorf("Redact(%q) = %q: %q shown", c.in, out, c.secret)
		}
	}
	// what stays: an element that names no credential, a URL's next query
	// parameter, a placeholder
	for in, want := range map[string]string{
		"<id>ossrh</id><username>deploy</username>":        "<id>ossrh</id><username>deploy</username>",
		"https://x.example/cb?token=abc123def456&state=ok": "https://x.example/cb?token=[REDACTED:token]&state=ok",
		"<password>${env.MAVEN_PASSWORD}</password>":       "<password>${env.MAVEN_PASSWORD}</password>",
	} {
		if out, _ := Redact(in); out != want {
			t.Errorf("Redact(%q) = %q, want %q", in, out, want)
		}
	}
}
