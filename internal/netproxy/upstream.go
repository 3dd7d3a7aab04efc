package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// UpstreamFrom reads the person's proxy settings through getenv, as
// curl and Go's http.ProxyFromEnvironment do: HTTPS_PROXY for https,
// HTTP_PROXY for http (upper case first, then lower), a URL without a
// scheme taken as http://; NO_PROXY a comma-separated list of "*", IP
// addresses, CIDR ranges and domains (a domain matches itself and its
// subdomains, ".domain" and "*.domain" its subdomains only), each with an
// optional :PORT. Nil when no proxy is set.
func UpstreamFrom(getenv func(string) string) func(*url.URL) (*url.URL, error) {
	get := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return getenv(strings.ToLower(k))
	}
	httpsProxy, httpProxy, noProxy := get("HTTPS_PROXY"), get("HTTP_PROXY"), get("NO_PROXY")
	if httpsProxy == "" && httpProxy == "" {
		return nil
	}
	return func(u *url.URL) (*url.URL, error) {
		p := httpProxy
		if u.Scheme == "https" {
			p = httpsProxy
		}
		if p == "" || bypass(noProxy, u.Hostname(), u.Port()) {
			return nil, nil
		}
		if !strings.Contains(p, "://") {
			p = "http://" + p
		}
		pu, err := url.Parse(p)
		if err != nil {
			// the parse error quotes the URL, its password with it
			return nil, errors.New("the proxy URL cannot be parsed")
		}
		return pu, nil
	}
}

// bypass reports a host NO_PROXY names.
func bypass(noProxy, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip, ipErr := netip.ParseAddr(host)
	for _, e := range strings.Split(noProxy, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			if ipErr == nil && pfx.Contains(ip.Unmap()) {
				return true
			}
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if p != port {
				continue
			}
			e = h
		}
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			if ipErr == nil && a.Unmap() == ip.Unmap() {
				return true
			}
			continue
		}
		e = strings.TrimPrefix(e, "*")
		if strings.HasPrefix(e, ".") {
			if strings.HasSuffix(host, e) {
				return true
			}
			continue
		}
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
}

// connectVia opens a tunnel to addr through the person's own proxy pu (an
// http:// or https:// URL, with user:password when it needs them) by
// CONNECT. Its credentials are sent to it alone and never appear in an
// error (the proxy is named by scheme, host and port).
func connectVia(pu *url.URL, addr string) (net.Conn, error) {
	// shown without its user or password (pu.Host holds neither)
	shown := pu.Scheme + "://" + pu.Host
	port := pu.Port()
	switch pu.Scheme {
	case "http", "":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return nil, fmt.Errorf("your proxy %s: piagent's proxy chains to an http:// or https:// proxy only", shown)
	}
	proxyAddr := net.JoinHostPort(pu.Hostname(), port)
	if err := refuseLoopbackBehindLocal(pu.Hostname(), addr); err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", proxyAddr, 15*time.Second)
	if err != nil {
		return nil, fmt.Errorf("your proxy %s: %v", shown, err)
	}
	if pu.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: pu.Hostname()})
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, fmt.Errorf("your proxy %s: %v", shown, err)
		}
		c = tc
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if u := pu.User; u != nil {
		pw, _ := u.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		c.Close()
		return nil, fmt.Errorf("your proxy %s: %v", shown, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("your proxy %s: %v", shown, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		c.Close()
		return nil, fmt.Errorf("your proxy %s refused CONNECT %s: %s", shown, addr, resp.Status)
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// refuseLoopbackBehindLocal: a proxy of the person's running on this
// machine would dial this machine's own services for a name that resolves
// to them, which the proxy must never reach. Where the name resolves here
// to such an address, it is refused; the upstream resolves it again
// itself, so a name whose answer changes between the two lookups is not
// caught (docs/sandbox.md says so). A remote proxy's loopback is not this
// machine's.
func refuseLoopbackBehindLocal(proxyHost, addr string) error {
	if a, err := netip.ParseAddr(proxyHost); !(proxyHost == "localhost" || err == nil && a.Unmap().IsLoopback()) {
		return nil
	}
	host, _, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for _, ip := range ips {
		if a := ip.Unmap(); a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() {
			return fmt.Errorf("%s resolves to %s, this machine's own or a link-local address: refused", host, a)
		}
	}
	return nil
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *bufferedConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
