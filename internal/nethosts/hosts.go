// Package nethosts names the hosts a confined command's network reaches
// through piagent's proxy ("network": "registries"): the package
// registries, and the entries a person writes (allowHosts, --net grants).
// It imports no network code, so that piagent-sandbox, which starts before
// every command, links none (the net package would make it a cgo binary).
package nethosts

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Registries are the hosts "network": "registries" reaches on port 443
// without being named: npm, the Go module proxy and checksum database,
// PyPI, crates.io, and GitHub for git clone over https (and the archives
// and release files npm and pip fetch from it).
var Registries = []string{
	"registry.npmjs.org", "registry.yarnpkg.com",
	"proxy.golang.org", "sum.golang.org", "storage.googleapis.com",
	"pypi.org", "files.pythonhosted.org",
	"crates.io", "index.crates.io", "static.crates.io",
	"github.com", "codeload.github.com", "objects.githubusercontent.com",
}

// Entry is one allowed host: a name (or "*.suffix"), or an IP literal,
// with a port (0: 443 and 80).
type Entry struct {
	Host string
	Port int
}

// ParseEntry reads HOST, HOST:PORT, *.DOMAIN[:PORT], [IPv6]:PORT.
func ParseEntry(s string) (Entry, error) {
	s = strings.TrimSpace(s)
	host, port := s, 0
	if h, p, ok := splitHostPort(s); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Entry{}, fmt.Errorf("%q: the port is not a number from 1 to 65535", s)
		}
		host, port = h, n
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	name := strings.TrimPrefix(host, "*.")
	if name == "" || strings.ContainsAny(name, "/ @*?#") {
		return Entry{}, fmt.Errorf("%q is not a host name, *.domain or an address, with an optional :port", s)
	}
	e := Entry{Host: host, Port: port}
	if e.Loopback() && port == 0 {
		return Entry{}, fmt.Errorf("%q: a service of this machine's is granted by its port (localhost:5432, 127.0.0.1:8080, [::1]:3000)", s)
	}
	return e, nil
}

// String is the entry as a person writes it.
func (e Entry) String() string {
	if e.Port == 0 {
		return e.Host
	}
	return JoinHostPort(e.Host, e.Port)
}

// Loopback reports an entry naming this machine's own loopback: it is
// served by a listener on the same address inside the command's network
// namespace, forwarded to the machine's, not through the proxy.
func (e Entry) Loopback() bool {
	if e.Host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(e.Host)
	return err == nil && a.IsLoopback()
}

func (e Entry) Matches(host string, port int) bool {
	if e.Port != 0 && e.Port != port || e.Port == 0 && port != 443 && port != 80 {
		return false
	}
	if suffix, ok := strings.CutPrefix(e.Host, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return host == e.Host
}

// Allowed reports whether host:port is reached through the proxy, given
// the person's entries (the registries on 443 always). A loopback address
// never is: those are forwarded by port, or not at all.
func Allowed(entries []Entry, host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if isLoopbackName(host) {
		return false
	}
	if port == 443 {
		for _, r := range Registries {
			if host == r {
				return true
			}
		}
	}
	for _, e := range entries {
		if !e.Loopback() && e.Matches(host, port) {
			return true
		}
	}
	return false
}

func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && (a.IsLoopback() || a.IsUnspecified() || a.Is4In6() && a.Unmap().IsLoopback())
}

// splitHostPort splits HOST:PORT and [IPv6]:PORT; false when there is no
// port.
func splitHostPort(s string) (string, string, bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]:")
		if i < 0 {
			return "", "", false
		}
		return s[1:i], s[i+2:], true
	}
	if strings.Count(s, ":") != 1 {
		return "", "", false
	}
	h, p, _ := strings.Cut(s, ":")
	return h, p, true
}

// JoinHostPort is host:port, with brackets around an IPv6 address.
func JoinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}
