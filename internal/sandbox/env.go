package sandbox

import (
	"slices"
	"strings"
)

// The environment a confined command or server gets is an allow-list, not
// Pi's: Pi's process holds the person's API keys (ANTHROPIC_API_KEY, cloud
// credentials), and every command and server would otherwise receive them.

// defaultEnv are the variables every confined command keeps: where things
// are, how to speak, which tools to use, how to reach the network.
var defaultEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "SHLVL",
	"LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLUMNS", "LINES",
	"EDITOR", "VISUAL", "PAGER", "LESS", "CI",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "PIP_CERT",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
	"GOPATH", "GOROOT", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "GOEXPERIMENT", "CGO_ENABLED",
	"CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "PKG_CONFIG_PATH",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS",
	"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_OPTS",
	"NVM_DIR", "NVM_BIN", "NODE_ENV", "NODE_OPTIONS", "NODE_PATH",
	"PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_ROOT", "PYENV_VERSION",
	"RBENV_ROOT", "GEM_HOME", "GEM_PATH", "BUNDLE_PATH",
}

// defaultPrefixes are families kept whole.
var defaultPrefixes = []string{"LC_"}

// CredentialName reports a variable name that looks like a credential: it
// never passes unless the person names it (passEnv, a grant, the server's
// own approved definition).
func CredentialName(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasPrefix(n, "AWS_") || strings.HasPrefix(n, "AZURE_") || strings.HasPrefix(n, "GOOGLE_") || strings.HasPrefix(n, "GCP_") {
		return true
	}
	for _, s := range []string{"_API_KEY", "_APIKEY", "_TOKEN", "_PASSWORD", "_PASSWD", "_CREDENTIALS", "_PRIVATE_KEY", "_ACCESS_KEY", "_SESSION", "_COOKIE", "_AUTH", "_KEY"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	for _, s := range []string{"SECRET", "TOKEN", "PASSWORD", "API_KEY", "APIKEY"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// FilterEnv keeps, of environ, the default variables that do not look like
// credentials, and every variable named in pass (the person's passEnv and
// grants, a server's own definition). The private folders the profile sets
// are added afterwards by Exec.
func FilterEnv(environ, pass []string) []string {
	out := make([]string, 0, len(defaultEnv))
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if slices.Contains(pass, k) || keptByDefault(k) && !CredentialName(k) {
			out = append(out, kv)
		}
	}
	return out
}

func keptByDefault(k string) bool {
	if slices.Contains(defaultEnv, k) {
		return true
	}
	for _, p := range defaultPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}
