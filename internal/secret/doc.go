// Package secret decides what counts as a credential: field names that name
// one, values that look like one, and variable references that stand in for
// one. It checks what `piagent-mcp add` may write (--env, --header, --url),
// masks server definitions for display and redacts free text such as tool
// results. It is pure: no files, no environment, no clock.
//
// # Credential names
//
// CredentialName splits a name into words on every character that is not a
// letter or digit and on camelCase boundaries (APIKey is api+key, OAuth is
// one word), lower-cases them and drops trailing digits (KEY2 is key). A name
// names a credential when one word is in this list, unless its last word is
// a qualifier (below).
//
//	rule        words
//	token       token tokens jwt accesstoken authtoken refreshtoken idtoken apitoken
//	            bottoken sessiontoken csrftoken xsrftoken usertoken
//	secret      secret secrets clientsecret apisecret appsecret
//	password    password passwords passwd pass passphrase
//	key         key keys apikey apikeys xapikey accesskey secretkey privatekey signingkey
//	            masterkey licensekey encryptionkey authkey sessionkey
//	auth        auth authn authorization authentication
//	credential  credential credentials cred creds
//	pat         pat
//	bearer      bearer
//	session     session sessions sessionid
//	cookie      cookie cookies
//
// Qualifiers: url uri endpoint host hostname port path file filename dir
// directory env var variable name type kind length len size count timeout ttl
// expiry expires expiration lifetime duration mode enabled disabled required
// format scope scopes issuer audience algorithm alg method provider helper
// command cmd location prefix policy rotation store. So TOKEN_URL,
// PASSWORD_FILE, bearerTokenEnv and SESSION_TIMEOUT pass; GITHUB_TOKEN,
// X-API-Key, Authorization, Set-Cookie, DB_PASS and SESSION_ID do not;
// KEYBOARD_LAYOUT, MONKEY, AUTHOR, TOKENIZER, PATH, PASSENGER and OAUTH pass.
//
// # Secret-looking values
//
// SecretValue searches inside a value and reports the most specific rule
// (highest priority) that fired. "\b" is an ASCII word boundary, so a prefix
// inside a word (disk-usage) does not count.
//
//	rule               prio  pattern
//	pem-private-key    100   -----BEGIN … PRIVATE KEY----- (RSA, EC, OPENSSH, ENCRYPTED, PGP … BLOCK),
//	                         through its END line or the end of the text
//	github-pat          95   \bgithub_pat_ then 50+ of [A-Za-z0-9_]
//	anthropic-key       95   \bsk-ant- then 32+ of [A-Za-z0-9_-]
//	slack-webhook       95   https://hooks.slack.com/services/T…/B…/ then 16+ alphanumerics
//	github-token        90   \bgh[pousr]_ then 36+ alphanumerics
//	openai-key          90   \bsk-, optional proj-|svcacct-|admin-, then 20+ of [A-Za-z0-9_-]
//	                         holding upper case, lower case and digits
//	aws-access-key-id   90   \b(AKIA|ASIA|ABIA|ACCA) then exactly 16 of [A-Z0-9]\b
//	slack-token         90   \bxox[abposr]- then 10+ of [A-Za-z0-9-] with a digit
//	gitlab-token        90   \bglpat- then 20+ of [A-Za-z0-9_-]
//	google-api-key      90   \bAIza then 35 of [A-Za-z0-9_-]
//	stripe-key          90   \b(sk|rk)_(live|test)_ then 16+ alphanumerics (pk_ keys are public)
//	npm-token           90   \bnpm_ then exactly 36 alphanumerics\b
//	jwt                 85   \beyJ…: three base64url parts joined by '.', the first
//	                         decoding to a JSON object with a non-empty string "alg"
//	url-credentials     70   the password of scheme://user:password@ (not a reference or ****)
//	bearer-token        60   "Bearer" (any case) then 8+ token68 characters with a letter and a digit
//	basic-credentials   60   "Basic" (any case) then base64 that decodes to printable "user:password"
//	high-entropy        10   see below
//
// High-entropy: a maximal run of [A-Za-z0-9+/=_-] ('=' only as trailing
// padding, so KEY=value is two runs) that
//
//   - has at least 32 characters without its '=' padding;
//   - holds upper case, lower case and digits (so hex — git SHAs, UUIDs,
//     sha256 digests — and upper-case identifiers never fire);
//   - has a Shannon entropy of at least 4.0 bits per character;
//   - splits into word segments (a capitalised, lower-case or upper-case
//     word with the digits after it, or a lone digit run) of at most 3.8
//     characters on average — random text changes case every one or two
//     characters, identifiers and paths do not;
//   - is at most one-eighth punctuation (words-joined-by-separators pass);
//   - does not decode, in either base64 alphabet, to at least 90% printable
//     text (base64 of ordinary text passes);
//   - is not public by its context: a run starting sha1-/sha256-/sha384-/
//     sha512- (subresource integrity) or pk_live_/pk_test_ (Stripe
//     publishable keys), a hash after h1: or shaNNN:, an SSH public key
//     after its ssh-…/ecdsa-… type word, or a line inside a PEM block that
//     is not a private key (certificates, public keys).
//
// A run that reads as a path (two or more '/'-separated parts, at least half
// of them words: com/file/AbC123/Design-System) is judged part by part.
// Measured on generated random keys: about 98.5% of 32-character, 99.5% of
// 40-character and all 64-character keys fire; none of 20,000 generated
// identifiers and paths do (TestHighEntropyRates). Known misses: all-hex or
// all-upper-case secrets (64-hex keys, base32 TOTP seeds), secrets shorter
// than 32 characters with no known prefix, and a JWT whose header does not
// start "eyJ" (one written with a space after '{').
//
// # References
//
// The adapter interpolates ${VAR}, $env:VAR and {env:VAR}, VAR being word
// characters. A value that is one reference, or only references joined by
// separators (" \t:;,/@._-=+") after at most one scheme word (Bearer, Basic,
// Token, Bot, Digest, ApiKey, Api-Key, Key, DPoP, SSWS), names variables
// and is never a secret.
//
// # Checks
//
// CheckEnv and CheckHeader refuse, in this order: nothing for an empty value
// or a reference-only value; a `!command` value only when the command text
// looks secret; a literal under a credential name (Rule "name:<word>"); a
// secret-looking literal under any name (Rule "value:<rule>"). The hint is
// the form to use: --env 'NAME=${NAME}' (a name that is not word characters
// becomes upper case with '_'), --header 'Name: [Scheme ]${NAME_UPPER}'.
// CheckURL takes https, or http for localhost, 127.0.0.0/8 and ::1; refuses
// userinfo, a missing host, other schemes, a credential-named query parameter
// with a literal value, and a secret-looking query value, path or fragment.
//
// # Masking
//
// Mask hides the values of secret-bearing fields of a server entry (env,
// headers, requestHeadersCommand.env, bearerToken, oauth.clientSecret) as
// "****", keeping references and `!command` values that hold no secret.
// Other string leaves are kept unless SecretValue flags them ("****"), they
// sit under a key that names a credential, or they hold a URL password
// (https://user:****@host).
//
// # Redaction
//
// Redact replaces secrets in free text with "[REDACTED:<rule>]": every span
// a value rule finds, and the value of every assignment whose key names a
// credential. At each ':' or '=' the key is the run of [A-Za-z0-9_.-]
// before it (optionally quoted, leading '-' and '.' dropped); the value is
// a quoted string, or up to whitespace, '&' or '"' after '=', or a bare
// JSON literal after a quoted key, or the rest of the line after ':'. A
// leading scheme word is kept (Authorization: Bearer [REDACTED:…]). Left
// alone, because they name where a secret comes from or are not
// assignments: empty values, references, $-variables, markers, "****",
// values starting with one of $[{(< or holding '(', type names and
// literals (string, true, null, …), member expressions (process.env.X),
// identifiers that are themselves credential names (password: password),
// "://", "::", ":=", "==", "=>", "!=", and keys that are file names
// (auth.go:12: in grep output) or follow '/' or '\'. Overlapping spans
// become one marker named by the highest-priority rule; assignment values
// rank 50, between bearer/basic and high-entropy. The result is scanned
// again until nothing is found, so Redact is idempotent and its output
// holds nothing SecretValue flags. Known limits: "--password value" with a
// space is not an assignment; ':' followed by prose ("auth: failed")
// is redacted.
package secret
