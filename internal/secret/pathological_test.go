package secret

import (
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/testenv"
)

func TestPathological(t *testing.T) {
	t.Parallel()
	for _, unit := range []string{
		"sk-", "-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----", "eyJ", "eyJhbGciOiJIUzI1NiJ9.", "a:", "a=", "\"k\":", "TOKEN=",
		"://", "a://b:", "Bearer ", "bearer a1", "Basic ", "ghp_", "xoxb-", "glpat-", "sk-ant-", "https://hooks.slack.com/",
		"aB3", "aB3/", "${", "[REDACTED:x]", "password: ", "'Authorization: ", "x-access-token:",
	} {
		s := strings.Repeat(unit, 100_000/len(unit))
		start := time.Now()
		Redact(s)
		SecretValue(s)
		if d := time.Since(start); d > testenv.Slow(2*time.Second) {
			t.Errorf("%q repeated to 100 KB: %v", unit, d)
		} else {
			t.Logf("%q repeated to 100 KB: %v", unit, d)
		}
	}
}
