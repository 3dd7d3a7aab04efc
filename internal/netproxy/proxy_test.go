package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/netlog"
)

// TestAllowed: the registries on 443, the person's entries by name, port
// and *.domain, and never a loopback name or address, whatever is listed.
func TestAllowed(t *testing.T) {
	var es []nethosts.Entry
	for _, s := range []string{"example.com", "*.corp.test:8443", "127.0.0.1:5432", "[::1]:3000"} {
		e, err := nethosts.ParseEntry(s)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"registry.npmjs.org", 443, true}, {"proxy.golang.org", 443, true}, {"PyPI.org.", 443, true}, {"github.com", 443, true},
		{"registry.npmjs.org", 80, false}, {"github.com", 22, false}, {"evil.test", 443, false},
		{"example.com", 443, true}, {"example.com", 80, true}, {"example.com", 8080, false}, {"www.example.com", 443, false},
		{"a.corp.test", 8443, true}, {"corp.test", 8443, false}, {"a.corp.test", 443, false},
		{"127.0.0.1", 5432, false}, {"localhost", 5432, false}, {"x.localhost", 443, false}, {"::1", 3000, false}, {"0.0.0.0", 443, false}, {"::ffff:127.0.0.1", 5432, false},
	} {
		if got := nethosts.Allowed(es, c.host, c.port); got != c.want {
			t.Errorf("Allowed(%s, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	for _, bad := range []string{"127.0.0.1", "localhost", "a b", "x:0", "http://x", "*."} {
		if _, err := nethosts.ParseEntry(bad); err == nil {
			t.Errorf("nethosts.ParseEntry(%q) accepted", bad)
		}
	}
}

// TestProxy: a host outside the list gets 403 naming the fix, logged with
// host, port and caller, by CONNECT and by plain http; an allowed one is
// reached both ways; the default dialer refuses a loopback address even
// for an allowed name.
func TestProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "fake %s %s", r.Host, r.URL.Path)
	}))
	defer backend.Close()
	var logged []netlog.Refusal
	e, _ := nethosts.ParseEntry("allowed.test:80")
	px := &Proxy{Entries: []nethosts.Entry{e}, Who: "server github", Log: func(r netlog.Refusal) { logged = append(logged, r) },
		Dial: func(network, addr string) (net.Conn, error) {
			if addr == "allowed.test:80" || addr == "proxy.golang.org:443" {
				return net.Dial(network, backend.Listener.Addr().String())
			}
			return nil, fmt.Errorf("unexpected dial %s", addr)
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
		b, _ := io.ReadAll(bufio.NewReader(c))
		return string(b)
	}
	out := ask("CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
	if !strings.HasPrefix(out, "HTTP/1.1 403") || !strings.Contains(out, "piagent-mcp grant github --net evil.test:443") {
		t.Errorf("CONNECT to a host outside the list:\n%s", out)
	}
	out = ask("GET http://evil.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	if !strings.HasPrefix(out, "HTTP/1.1 403") || !strings.Contains(out, "--net evil.test:80") {
		t.Errorf("plain http to a host outside the list:\n%s", out)
	}
	if len(logged) != 2 || logged[0].Host != "evil.test" || logged[0].Port != 443 || logged[0].Who != "server github" || logged[1].Port != 80 {
		t.Errorf("refusals logged: %+v", logged)
	}
	out = ask("GET http://allowed.test/path HTTP/1.1\r\nHost: allowed.test\r\nProxy-Connection: keep-alive\r\n\r\n")
	if !strings.Contains(out, "200 OK") || !strings.Contains(out, "fake allowed.test /path") {
		t.Errorf("plain http to an allowed host:\n%s", out)
	}
	out = ask("CONNECT proxy.golang.org:443 HTTP/1.1\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: proxy.golang.org\r\nConnection: close\r\n\r\n")
	if !strings.Contains(out, "200 Connection established") || !strings.Contains(out, "fake proxy.golang.org /tunnel") {
		t.Errorf("CONNECT to a registry:\n%s", out)
	}
	if len(logged) != 2 {
		t.Errorf("allowed connections were logged as refused: %+v", logged)
	}
	// The dialer outside refuses this machine's own addresses.
	if c, err := DialOutside("tcp", backend.Listener.Addr().String()); err == nil {
		c.Close()
		t.Error("DialOutside reached a loopback address")
	}
	// Agent's fix names the grant and allowHosts.
	if f := (&Proxy{Who: "agent"}).Fix("x.test", 443); !strings.Contains(f, "piagent-mcp grant --agent --net x.test:443") || !strings.Contains(f, "allowHosts") {
		t.Errorf("agent's fix: %s", f)
	}
}

// BenchmarkConnect is a connection and a one-byte round trip to a local
// TCP service, directly and through the proxy (CONNECT, then the same
// round trip): what the proxy adds to each connection a command makes.
func BenchmarkConnect(b *testing.B) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	e, _ := nethosts.ParseEntry("echo.test:7")
	px := &Proxy{Entries: []nethosts.Entry{e}, Who: "agent", Dial: func(n, _ string) (net.Conn, error) { return net.Dial(n, echo.Addr().String()) }}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go px.Serve(ln)
	roundTrip := func(b *testing.B, c net.Conn, r *bufio.Reader) {
		if _, err := c.Write([]byte{'x'}); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadByte(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", echo.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			roundTrip(b, c, bufio.NewReader(c))
			c.Close()
		}
	})
	b.Run("Proxied", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			io.WriteString(c, "CONNECT echo.test:7 HTTP/1.1\r\n\r\n")
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%v %v", err, resp)
			}
			roundTrip(b, c, r)
			c.Close()
		}
	})
}
