package secret

import "strings"

// credentialWords maps a lower-cased word of a field name to the rule it
// reports. Words are found by splitting on every character that is not a
// letter or digit and on camelCase boundaries, then dropping trailing digits
// (KEY2 is "key").
var credentialWords = map[string]string{
	"token": "token", "tokens": "token", "jwt": "token",
	"secret": "secret", "secrets": "secret",
	"password": "password", "passwords": "password", "passwd": "password",
	"pass": "password", "passphrase": "password",
	"key": "key", "keys": "key",
	"auth": "auth", "authn": "auth", "authorization": "auth", "authentication": "auth",
	"credential": "credential", "credentials": "credential", "cred": "credential", "creds": "credential",
	"pat":     "pat",
	"bearer":  "bearer",
	"session": "session", "sessions": "session",
	"cookie": "cookie", "cookies": "cookie",

	// Compounds people write without a separator.
	"apikey": "key", "apikeys": "key", "accesskey": "key", "secretkey": "key",
	"privatekey": "key", "signingkey": "key", "masterkey": "key", "licensekey": "key",
	"encryptionkey": "key", "authkey": "key", "sessionkey": "key", "xapikey": "key",
	"accesstoken": "token", "authtoken": "token", "refreshtoken": "token", "idtoken": "token",
	"apitoken": "token", "bottoken": "token", "sessiontoken": "token", "csrftoken": "token",
	"xsrftoken": "token", "usertoken": "token",
	"clientsecret": "secret", "apisecret": "secret", "appsecret": "secret",
	"sessionid": "session",
}

// qualifierWords are last words that turn a credential word into the name of
// something about the credential rather than the credential itself:
// TOKEN_URL, PASSWORD_FILE, bearerTokenEnv, SESSION_TIMEOUT.
var qualifierWords = map[string]bool{
	"url": true, "uri": true, "endpoint": true, "host": true, "hostname": true, "port": true,
	"path": true, "file": true, "filename": true, "dir": true, "directory": true,
	"env": true, "var": true, "variable": true, "name": true, "type": true, "kind": true,
	"length": true, "len": true, "size": true, "count": true, "timeout": true, "ttl": true,
	"expiry": true, "expires": true, "expiration": true, "lifetime": true, "duration": true,
	"mode": true, "enabled": true, "disabled": true, "required": true, "format": true,
	"scope": true, "scopes": true, "issuer": true, "audience": true, "algorithm": true,
	"alg": true, "method": true, "provider": true, "helper": true, "command": true, "cmd": true,
	"location": true, "prefix": true, "policy": true, "rotation": true, "store": true,
}

// CredentialName reports whether a field name (an environment variable, a
// header, a JSON key) names a credential, and which word made it so. The
// match is case-insensitive and on word boundaries, so KEYBOARD_LAYOUT,
// MONKEY, AUTHOR and TOKENIZER pass. A name whose last word is a qualifier
// (TOKEN_URL, PASSWORD_FILE, bearerTokenEnv) names something about a
// credential and passes too.
func CredentialName(name string) (rule string, ok bool) {
	words := splitWords(name)
	if len(words) == 0 {
		return "", false
	}
	if len(words) > 1 && qualifierWords[words[len(words)-1]] {
		return "", false
	}
	for _, w := range words {
		if r, found := credentialWords[w]; found {
			return r, true
		}
	}
	return "", false
}

// splitWords splits a name into lower-case words on non-alphanumeric
// characters and camelCase boundaries ("APIKey" is "api", "key"; "OAuth" is
// one word). Trailing digits are dropped from each word.
func splitWords(name string) []string {
	name = strings.ReplaceAll(name, "OAuth", "Oauth")
	var words []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := strings.TrimRight(strings.ToLower(name[start:end]), "0123456789")
		if w != "" {
			words = append(words, w)
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start >= 0 && isUpper(c) {
			prev := name[i-1]
			nextLower := i+1 < len(name) && isLower(name[i+1])
			// aB starts a word; in ABc the B starts it.
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && nextLower) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return words
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }

// isWordChar is the adapter's \w: ASCII letters, digits and underscore.
func isWordChar(c byte) bool { return isAlnum(c) || c == '_' }
