package secret

import (
	"strings"
	"testing"
)

// benchText is about 10 KB of realistic tool output with a few secrets.
func benchText() string {
	var b strings.Builder
	lines := []string{
		"src/internal/secret/values.go:42:\tre: regexp.MustCompile(`\\bgh[pousr]_[A-Za-z0-9]{36,}`),",
		"commit " + fake(500, hexChars, 40),
		"Author: Alice Example <alice@example.com>",
		"    Merge pull request #1234 from acme/feature/disk-usage-report",
		"/usr/local/lib/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
		"npm notice New minor version of npm available! 10.8.2 -> 10.9.0",
		"2026-07-28T12:34:56.789Z info request id=" + fakeUUID(501) + " path=/v1/models status=200",
		`{"name":"demo","version":"1.2.3","dependencies":{"@upstash/context7-mcp":"3.2.4"}}`,
		"total 48\ndrwxr-xr-x  6 alice staff   192 Jul 28 12:00 .\n-rw-r--r--  1 alice staff  1024 Jul 28 11:59 README.md",
	}
	secrets := []string{
		"GITHUB_TOKEN=" + fakeGHP,
		"> Authorization: Bearer " + fakeRandom64,
		`"password": "hunter2"`,
		"origin\thttps://x-access-token:" + fakeGHS + "@github.com/acme/app.git (fetch)",
	}
	for i := 0; b.Len() < 10*1024; i++ {
		b.WriteString(lines[i%len(lines)])
		b.WriteByte('\n')
		if i%25 == 24 {
			b.WriteString(secrets[(i/25)%len(secrets)])
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func BenchmarkSecretValue(b *testing.B) {
	text := benchText()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		SecretValue(text)
	}
}

func BenchmarkSecretValueShort(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		SecretValue("--max-old-space-size=4096")
	}
}

func BenchmarkRedact(b *testing.B) {
	text := benchText()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Redact(text)
	}
}

func BenchmarkRedactClean(b *testing.B) {
	text, _ := Redact(benchText())
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Redact(text)
	}
}
