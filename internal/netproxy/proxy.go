// Package netproxy is the proxy through which a confined command reaches
// the network in "network": "registries" mode: an HTTP proxy (CONNECT for
// https, absolute-form requests for plain http) that piagent serves outside
// the sandbox and that dials only the package registries and the hosts the
// person named. Everything else gets an HTTP 403 whose body names the fix,
// and is logged (host, port, which call) for the session notice and doctor.
//
// It is served by `piagent-netproxy __piagent-netproxy` (ServeMain), which the
// `sandbox exec` process waiting for the command starts at the command's
// first connection on listeners made before the command started; when the
// command ends, it passes on what is queued and ends. A raw TCP connection
// past it is refused in the command's network namespace and logged from a
// packet socket (WatchRaw). An allowed host is reached through the
// person's own proxy when piagent's environment names one (connectVia).
package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/netlog"
)

// Proxy serves one sandboxed command's connections.
type Proxy struct {
	Entries []nethosts.Entry
	// Who is "agent" or "server NAME", for the log and the fix.
	Who string
	// Log receives each refusal (may be nil).
	Log func(netlog.Refusal)
	// Dial opens a connection outside the sandbox (nil: a dialer that
	// refuses this machine's loopback, unspecified and link-local
	// addresses, whatever name led there).
	Dial func(network, addr string) (net.Conn, error)
	// Upstream names the person's own proxy for a URL (nil: none), as
	// http.ProxyFromEnvironment does from HTTPS_PROXY, HTTP_PROXY and
	// NO_PROXY in piagent's environment: an allowed host is then reached
	// by CONNECT through it.
	Upstream func(*url.URL) (*url.URL, error)
	// Max is the most connections served at once (0: DefaultMax); past
	// it, a connection is refused with 503, naming the limit.
	Max int

	active   sync.WaitGroup
	open     atomic.Int64
	draining atomic.Bool
	rawMu    sync.Mutex
	rawSeen  map[string]bool
}

// DefaultMax is the most connections one command's proxy serves at once:
// far more than npm's or go's parallel fetches (npm's maxsockets is 15 by
// default), few enough that a command cannot make the proxy hold
// thousands of connections and descriptors open.
const DefaultMax = 256

// Fix names what allows host:port for p's caller.
func (p *Proxy) Fix(host string, port int) string {
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	if name, ok := strings.CutPrefix(p.Who, "server "); ok {
		return fmt.Sprintf("piagent-mcp grant %s --net %s", name, hp)
	}
	return fmt.Sprintf("piagent-mcp grant --agent --net %s (or add %q to \"allowHosts\" in ~/.pi/piagent-policy.json)", hp, hp)
}

// rawFix names what reaches host:port for a command that connected past
// the proxy: nothing but the proxy leaves the namespace.
func (p *Proxy) rawFix(host string, port int) string {
	return "raw TCP never leaves the sandbox: connect through the proxy in HTTPS_PROXY/HTTP_PROXY; if the proxy refuses the host, " + p.Fix(host, port)
}

// Serve accepts on ln until it is closed.
func (p *Proxy) Serve(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if p.draining.Load() {
					return nil
				}
				continue
			}
			return err
		}
		if !p.admit() {
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				respond(c, 503, "Service Unavailable", fmt.Sprintf("piagent: this command already has %d connections open through piagent's network proxy, the most it serves at once; close some (or fetch fewer at a time) and retry\n", p.max()))
			}()
			continue
		}
		go func() {
			defer p.release()
			p.handle(c)
		}()
	}
}

func (p *Proxy) max() int {
	if p.Max > 0 {
		return p.Max
	}
	return DefaultMax
}

// admit counts a connection in, unless Max are open.
func (p *Proxy) admit() bool {
	if p.open.Add(1) > int64(p.max()) {
		p.open.Add(-1)
		return false
	}
	p.active.Add(1)
	return true
}

func (p *Proxy) release() {
	p.open.Add(-1)
	p.active.Done()
}

// Drain makes Serve return once ln's queue is empty (after its next
// deadline, which the caller sets), and waits, at most bound, for the
// connections being served to end.
func (p *Proxy) Drain(bound time.Duration) {
	p.draining.Store(true)
	done := make(chan struct{})
	go func() { p.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
	}
}

const maxHeader = 64 << 10

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(io.LimitReader(c, maxHeader), 4096)
	tr := textproto.NewReader(br)
	line, err := tr.ReadLine()
	if err != nil {
		return
	}
	method, target, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(target, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/1.") {
		respond(c, 400, "Bad Request", "piagent: not an HTTP/1 proxy request\n")
		return
	}
	hdr, err := tr.ReadMIMEHeader()
	if err != nil {
		respond(c, 400, "Bad Request", "piagent: the request's headers could not be read\n")
		return
	}
	var host string
	var port int
	if method == "CONNECT" {
		h, ps, err := net.SplitHostPort(target)
		n, perr := strconv.Atoi(ps)
		if err != nil || perr != nil || n < 1 || n > 65535 {
			respond(c, 400, "Bad Request", "piagent: CONNECT needs host:port\n")
			return
		}
		host, port = h, n
	} else {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			respond(c, 400, "Bad Request", "piagent: this proxy takes CONNECT, or a request for an absolute http:// URL\n")
			return
		}
		host, port = u.Hostname(), 80
		if ps := u.Port(); ps != "" {
			if port, err = strconv.Atoi(ps); err != nil {
				respond(c, 400, "Bad Request", "piagent: bad port\n")
				return
			}
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !nethosts.Allowed(p.Entries, host, port) {
		p.refuse(c, host, port)
		return
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	up, err := p.dial(method == "CONNECT", addr)
	if err != nil {
		respond(c, 502, "Bad Gateway", fmt.Sprintf("piagent: %s: %v\n", addr, err))
		return
	}
	defer up.Close()
	c.SetReadDeadline(time.Time{})
	if method == "CONNECT" {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
	} else {
		// One request per connection, in origin form, without the
		// proxy's own headers.
		u, _ := url.Parse(target)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, u.RequestURI())
		for k, vs := range hdr {
			switch k {
			case "Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive":
				continue
			}
			for _, v := range vs {
				fmt.Fprintf(&b, "%s: %s\r\n", k, v)
			}
		}
		b.WriteString("Connection: close\r\n\r\n")
		if _, err := io.WriteString(up, b.String()); err != nil {
			return
		}
	}
	// What the client sent beyond the header is in br; the rest comes
	// from c itself, without the header's limit.
	rest := io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c)
	pipe(c, up, rest)
}

// dial reaches an allowed addr: through the person's own proxy where
// Upstream names one for it, else directly (Dial, or DialOutside).
func (p *Proxy) dial(connect bool, addr string) (net.Conn, error) {
	if p.Upstream != nil {
		scheme := "http"
		if connect {
			scheme = "https"
		}
		pu, err := p.Upstream(&url.URL{Scheme: scheme, Host: addr})
		if err != nil {
			return nil, fmt.Errorf("your proxy setting (HTTPS_PROXY/HTTP_PROXY): %v", err)
		}
		if pu != nil {
			return connectVia(pu, addr)
		}
	}
	if p.Dial != nil {
		return p.Dial("tcp", addr)
	}
	return DialOutside("tcp", addr)
}

// pipe copies both ways until either side ends.
func pipe(c, up net.Conn, fromClient io.Reader) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, fromClient)
		if tc, ok := up.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
	}()
	io.Copy(c, up)
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	wg.Wait()
}

func (p *Proxy) refuse(c net.Conn, host string, port int) {
	fix := p.Fix(host, port)
	if p.Log != nil {
		p.Log(netlog.Refusal{Time: time.Now().UTC(), Host: host, Port: port, Who: p.Who, Fix: fix})
	}
	who := "the agent's commands"
	if strings.HasPrefix(p.Who, "server ") {
		who = "this server"
	}
	respond(c, 403, "Forbidden", fmt.Sprintf("piagent: %s is not among the hosts %s may reach (\"network\": \"registries\": the package registries and the hosts you named). To allow it: %s\n",
		net.JoinHostPort(host, strconv.Itoa(port)), who, fix))
}

func respond(c net.Conn, code int, status, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", code, status, len(body), body)
}

// DialOutside dials addr from outside the sandbox, refusing this machine's
// own addresses (loopback, unspecified) and link-local ones (a cloud's
// metadata service), whatever name resolved to them: an allowed name is
// not a way to the machine's services.
func DialOutside(network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 15 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		a := ap.Addr().Unmap()
		if a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() {
			return fmt.Errorf("%s is this machine's own or link-local address: refused", a)
		}
		return nil
	}}
	return d.Dial(network, addr)
}
