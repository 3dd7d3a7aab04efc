package netproxy

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/nethosts"
)

// fakeUpstream is a person's own proxy: it answers CONNECT HOST:PORT by
// tunnelling to backend, records each request line and its
// Proxy-Authorization, and refuses (407) a CONNECT without want's
// credentials.
type fakeUpstream struct {
	ln      net.Listener
	mu      sync.Mutex
	seen    []string
	auths   []string
	backend string
	want    string
}

func startUpstream(t *testing.T, backend, user, pass string) *fakeUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	u := &fakeUpstream{ln: ln, backend: backend, want: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				u.mu.Lock()
				u.seen = append(u.seen, req.Method+" "+req.Host)
				u.auths = append(u.auths, req.Header.Get("Proxy-Authorization"))
				u.mu.Unlock()
				if req.Method != "CONNECT" || req.Header.Get("Proxy-Authorization") != u.want {
					io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
					return
				}
				up, err := net.Dial("tcp", u.backend)
				if err != nil {
					io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
					return
				}
				defer up.Close()
				io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
				go io.Copy(up, br)
				io.Copy(c, up)
			}()
		}
	}()
	return u
}

func (u *fakeUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string{}, u.seen...)
}

// TestUpstream (issue 44): with the person's own proxy in piagent's
// environment (HTTPS_PROXY, HTTP_PROXY with user and password, NO_PROXY),
// an allowed host is reached by CONNECT through it, https and plain http,
// with its credentials sent to it alone; a host NO_PROXY names is dialled
// directly; a refused host never reaches it; and when it refuses, the
// command's 502 names it without its user or password.
func TestUpstream(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend %s %s", r.Host, r.URL.Path)
	}))
	defer backend.Close()
	up := startUpstream(t, backend.Listener.Addr().String(), "alice", "s3cret")
	env := map[string]string{"HTTPS_PROXY": "http://alice:s3cret@" + up.ln.Addr().String(), "http_proxy": "alice:s3cret@" + up.ln.Addr().String(), "no_proxy": "other.test, direct.test"}
	var es []nethosts.Entry
	for _, h := range []string{"allowed.test", "direct.test"} {
		e, _ := nethosts.ParseEntry(h)
		es = append(es, e)
	}
	var direct []string
	px := &Proxy{Entries: es, Who: "agent", Upstream: UpstreamFrom(func(k string) string { return env[k] }), Dial: func(network, addr string) (net.Conn, error) {
		direct = append(direct, addr)
		return net.Dial(network, backend.Listener.Addr().String())
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go px.Serve(ln)
	ask := func(req string) string {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, req)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	out := ask("CONNECT allowed.test:443 HTTP/1.1\r\n\r\nGET /tls HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	if !strings.Contains(out, "200 Connection established") || !strings.Contains(out, "backend allowed.test /tls") {
		t.Errorf("CONNECT through the upstream:\n%s", out)
	}
	out = ask("GET http://allowed.test/plain HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if !strings.Contains(out, "backend allowed.test /plain") {
		t.Errorf("plain http through the upstream:\n%s", out)
	}
	if got := up.requests(); len(got) != 2 || got[0] != "CONNECT allowed.test:443" || got[1] != "CONNECT allowed.test:80" {
		t.Errorf("the upstream saw %q", got)
	}
	for _, a := range up.auths {
		if a != up.want {
			t.Errorf("the upstream got credentials %q", a)
		}
	}
	if len(direct) != 0 {
		t.Errorf("dialled directly despite the upstream: %v", direct)
	}
	// NO_PROXY: directly.
	out = ask("CONNECT direct.test:443 HTTP/1.1\r\n\r\nGET /d HTTP/1.1\r\nHost: direct.test\r\nConnection: close\r\n\r\n")
	if !strings.Contains(out, "backend direct.test /d") || len(direct) != 1 || len(up.requests()) != 2 {
		t.Errorf("a NO_PROXY host: direct %v, upstream %q\n%s", direct, up.requests(), out)
	}
	// Refused here: the upstream never sees it.
	out = ask("CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
	if !strings.Contains(out, "403") || len(up.requests()) != 2 {
		t.Errorf("a refused host: upstream %q\n%s", up.requests(), out)
	}
	// The upstream refuses (wrong password): 502 naming it, redacted.
	px.Upstream = func(*url.URL) (*url.URL, error) { return url.Parse("http://alice:wr0ng-pw@" + up.ln.Addr().String()) }
	out = ask("CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
	if !strings.Contains(out, "502") || !strings.Contains(out, "407") || !strings.Contains(out, "http://"+up.ln.Addr().String()) || strings.Contains(out, "wr0ng-pw") || strings.Contains(out, "alice") {
		t.Errorf("the upstream's refusal:\n%s", out)
	}
}

// TestNoProxy: NO_PROXY as curl and Go read it.
func TestNoProxy(t *testing.T) {
	for _, c := range []struct {
		no, host, port string
		want           bool
	}{
		{"*", "a.test", "443", true},
		{"corp.test", "corp.test", "443", true}, {"corp.test", "x.corp.test", "443", true}, {"corp.test", "xcorp.test", "443", false},
		{".corp.test", "corp.test", "443", false}, {".corp.test", "x.corp.test", "443", true}, {"*.corp.test", "x.corp.test", "443", true},
		{"corp.test:8443", "corp.test", "443", false}, {"corp.test:8443", "corp.test", "8443", true},
		{"10.0.0.0/8", "10.1.2.3", "443", true}, {"10.0.0.0/8", "11.1.2.3", "443", false}, {"192.0.2.1", "192.0.2.1", "80", true},
		{"[2001:db8::1]:443", "2001:db8::1", "443", true}, {" A.Test ,b.test", "a.test", "443", true}, {"", "a.test", "443", false},
	} {
		if got := bypass(c.no, c.host, c.port); got != c.want {
			t.Errorf("bypass(%q, %s:%s) = %v, want %v", c.no, c.host, c.port, got, c.want)
		}
	}
	if UpstreamFrom(func(string) string { return "" }) != nil {
		t.Error("no proxy set, and an upstream")
	}
	f := UpstreamFrom(func(k string) string {
		return map[string]string{"https_proxy": "http://u:p@[::1", "HTTP_PROXY": "h:3128"}[k]
	})
	if _, err := f(&url.URL{Scheme: "https", Host: "a.test:443"}); err == nil || strings.Contains(err.Error(), "u:p") {
		t.Errorf("an unparsable proxy URL: %v", err)
	}
	if pu, _ := f(&url.URL{Scheme: "http", Host: "a.test:80"}); pu == nil || pu.String() != "http://h:3128" {
		t.Errorf("HTTP_PROXY without a scheme: %v", pu)
	}
}

// TestMaxConnections (issue 44): past Max connections open at once, the
// next is refused with 503 naming the limit; once one ends, a new one is
// served again.
func TestMaxConnections(t *testing.T) {
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	go func() {
		for {
			c, err := hold.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()
	e, _ := nethosts.ParseEntry("hold.test")
	px := &Proxy{Entries: []nethosts.Entry{e}, Who: "agent", Max: 3, Dial: func(network, _ string) (net.Conn, error) {
		return net.Dial(network, hold.Addr().String())
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go px.Serve(ln)
	open := func() (net.Conn, string) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "CONNECT hold.test:443 HTTP/1.1\r\n\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		return c, line
	}
	var held []net.Conn
	for i := range 3 {
		c, line := open()
		if !strings.Contains(line, "200") {
			t.Fatalf("connection %d of 3: %q", i+1, line)
		}
		held = append(held, c)
	}
	c, _ := net.Dial("tcp", ln.Addr().String())
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "CONNECT hold.test:443 HTTP/1.1\r\n\r\n")
	b, _ := io.ReadAll(c)
	c.Close()
	if out := string(b); !strings.Contains(out, "503") || !strings.Contains(out, "already has 3 connections open") {
		t.Errorf("the connection past the limit:\n%s", out)
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for px.open.Load() >= 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c, line := open()
	defer c.Close()
	if !strings.Contains(line, "200") {
		t.Errorf("after one ended, a new connection: %q", line)
	}
	for _, c := range held[1:] {
		c.Close()
	}
	if px.max() != 3 || (&Proxy{}).max() != DefaultMax || DefaultMax != 256 {
		t.Errorf("limits: %d, %d", px.max(), (&Proxy{}).max())
	}
}
