package secret

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Test values are generated here, never written out: every token below is a
// fake that has the format of a real one and was never issued by anyone.

const (
	alnumChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64Chars   = alnumChars + "+/"
	b64URL     = alnumChars + "-_"
	upperNum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexChars   = "0123456789abcdef"
	digitChars = "0123456789"
)

// fake returns n characters of alphabet, deterministic in seed.
func fake(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func fakeBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0xb17e))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func fakeUUID(seed uint64) string {
	h := fake(seed, hexChars, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func fakeJWT(seed uint64) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"1234567890","name":"Test User","iat":1516239022}`)) + "." +
		fake(seed, b64URL, 43)
}

func fakePEM(seed uint64, kind string) string {
	body := base64.StdEncoding.EncodeToString(fakeBytes(seed, 180))
	var lines []string
	for len(body) > 64 {
		lines = append(lines, body[:64])
		body = body[64:]
	}
	lines = append(lines, body)
	return "-----BEGIN " + kind + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + kind + "-----"
}

// Named fakes used across the tests.
var (
	fakeGHP       = "ghp_" + fake(1, alnumChars, 36)
	fakeGHO       = "gho_" + fake(2, alnumChars, 36)
	fakeGHS       = "ghs_" + fake(3, alnumChars, 36)
	fakeGHU       = "ghu_" + fake(4, alnumChars, 36)
	fakeGHR       = "ghr_" + fake(5, alnumChars, 36)
	fakeGitHubPAT = "github_pat_" + fake(6, alnumChars, 22) + "_" + fake(7, alnumChars, 59)
	fakeOpenAI    = "sk-" + fake(8, alnumChars, 48)
	fakeOpenAIPrj = "sk-proj-" + fake(9, b64URL, 156)
	fakeAnthropic = "sk-ant-api03-" + fake(10, b64URL, 93) + "AA"
	fakeAKIA      = "AKIA" + fake(11, upperNum, 16)
	fakeASIA      = "ASIA" + fake(12, upperNum, 16)
	fakeSlackBot  = "xoxb-" + fake(13, digitChars, 12) + "-" + fake(14, digitChars, 13) + "-" + fake(15, alnumChars, 24)
	fakeSlackUser = "xoxp-" + fake(16, digitChars, 12) + "-" + fake(17, digitChars, 12) + "-" + fake(18, digitChars, 13) + "-" + fake(19, hexChars, 32)
	fakeSlackHook = "https://hooks.slack.com/services/T" + fake(20, upperNum, 8) + "/B" + fake(21, upperNum, 10) + "/" + fake(22, alnumChars, 24)
	fakeGLPAT     = "glpat-" + fake(23, b64URL, 20)
	fakeGoogle    = "AIza" + fake(24, b64URL, 35)
	fakeStripe    = "sk_live_" + fake(25, alnumChars, 24)
	fakeStripeRK  = "rk_live_" + fake(26, alnumChars, 24)
	fakeStripeT   = "sk_test_" + fake(27, alnumChars, 24)
	fakeNPM       = "npm_" + fake(28, alnumChars, 36)
	fakeJWTValue  = fakeJWT(29)
	fakeRSA       = fakePEM(30, "RSA PRIVATE KEY")
	fakeOpenSSH   = fakePEM(31, "OPENSSH PRIVATE KEY")
	fakePKCS8     = fakePEM(32, "PRIVATE KEY")
	fakeEC        = fakePEM(33, "EC PRIVATE KEY")
	fakeAWSSecret = fake(34, b64Chars, 40)
	fakeRandom32  = fake(35, alnumChars, 32)
	fakeRandom64  = fake(36, b64URL, 64)
	fakePassword  = fake(37, alnumChars, 16)
)
