package netproxy

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/netlog"
)

// ServeArg is the argument with which piagent-netproxy serves one
// command's proxy (ServeMain): never typed by a person. The sandbox starts
// it, at the command's first connection, from beside its own binary.
const ServeArg = "__piagent-netproxy"

// SpecEnv carries the Spec to ServeMain.
const SpecEnv = "PIAGENT_NETPROXY_SPEC"

// Spec is what one command's proxy serves. Its listeners are descriptors 3
// and on: the proxy's, then one per Forward address.
type Spec struct {
	Entries []string `json:"entries"`
	Who     string   `json:"who"`
	Log     string   `json:"log"`
	// Forward are the machine's loopback addresses granted by port, each
	// served by a listener of the same address inside the namespace.
	Forward []string `json:"forward"`
	// Dial maps HOST:PORT to the address dialled instead (a test build's
	// local fakes; empty otherwise).
	Dial map[string]string `json:"dial,omitempty"`
	// Watch: the descriptor after the listeners is a packet socket that
	// sees the first packet of each raw TCP connection refused in the
	// namespace (WatchRaw logs them).
	Watch bool `json:"watch,omitempty"`
}

// ServeMain serves the listeners it inherited until its standard input
// ends (its parent's word that the command has ended): it then takes what
// is still queued on them, finishes the connections it serves (at most
// drainBound) and ends. Its parent's death signal ends it otherwise.
func ServeMain() int {
	var s Spec
	if err := json.Unmarshal([]byte(os.Getenv(SpecEnv)), &s); err != nil {
		fmt.Fprintf(os.Stderr, "piagent: the network proxy: %v\n", err)
		return 2
	}
	var lns []net.Listener
	for i := range 1 + len(s.Forward) {
		f := os.NewFile(uintptr(3+i), "listener")
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "piagent: the network proxy: %v\n", err)
			return 2
		}
		lns = append(lns, ln)
	}
	px := &Proxy{Who: s.Who, Upstream: upstreamFromEnv()}
	for _, h := range s.Entries {
		if e, err := nethosts.ParseEntry(h); err == nil {
			px.Entries = append(px.Entries, e)
		}
	}
	if s.Log != "" {
		px.Log = func(r netlog.Refusal) { netlog.Append(s.Log, r) }
	}
	if len(s.Dial) > 0 {
		px.Dial = func(network, addr string) (net.Conn, error) {
			if to, ok := s.Dial[addr]; ok {
				return net.Dial(network, to)
			}
			return DialOutside(network, addr)
		}
	}
	var wg sync.WaitGroup
	var watch *os.File
	if s.Watch {
		// non-blocking, so that the file is pollable and its read can
		// have a deadline (the parent's Fd made it blocking)
		fd := 3 + len(lns)
		syscall.SetNonblock(fd, true)
		watch = os.NewFile(uintptr(fd), "refused")
		wg.Add(1)
		go func() { defer wg.Done(); px.WatchRaw(watch) }()
	}
	wg.Add(len(lns))
	go func() { defer wg.Done(); px.Serve(lns[0]) }()
	for i, ln := range lns[1:] {
		go func() { defer wg.Done(); px.forward(ln, s.Forward[i]) }()
	}
	io.Copy(io.Discard, os.Stdin)
	// The command has ended: no one is left to connect, so what is
	// queued now is all there will be. It is taken, then the listeners
	// and the packet socket are closed.
	px.draining.Store(true)
	px.takeQueued(lns[0], px.handle)
	for i, ln := range lns[1:] {
		px.takeQueued(ln, func(c net.Conn) { forwardConn(c, s.Forward[i]) })
	}
	for _, ln := range lns {
		ln.Close()
	}
	if watch != nil {
		if rc, err := watch.SyscallConn(); err == nil {
			buf := make([]byte, 256)
			rc.Control(func(fd uintptr) {
				for {
					n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
					if err == syscall.EINTR {
						continue
					}
					if err != nil {
						return
					}
					px.logRaw(buf[:n])
				}
			})
		}
		watch.Close()
	}
	wg.Wait()
	px.Drain(drainBound)
	return 0
}

// takeQueued accepts, without waiting, every connection queued on ln, and
// serves each.
func (p *Proxy) takeQueued(ln net.Listener, serve func(net.Conn)) {
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		for {
			nfd, _, err := syscall.Accept(int(fd))
			if err == syscall.EINTR || err == syscall.ECONNABORTED {
				continue
			}
			if err != nil {
				return
			}
			syscall.CloseOnExec(nfd)
			f := os.NewFile(uintptr(nfd), "conn")
			c, err := net.FileConn(f)
			f.Close()
			if err != nil {
				continue
			}
			if !p.admit() {
				c.Close()
				continue
			}
			go func() {
				defer p.release()
				serve(c)
			}()
		}
	})
}

// drainBound is how long the proxy may take, once the command has ended,
// to pass on what it sent.
const drainBound = 10 * time.Second

// upstreamFromEnv is the person's own proxy, from HTTPS_PROXY, HTTP_PROXY
// and NO_PROXY in the environment piagent passed (nil when none is set).
func upstreamFromEnv() func(*url.URL) (*url.URL, error) { return UpstreamFrom(os.Getenv) }

// forward passes each connection on ln to the machine's own addr.
func (p *Proxy) forward(ln net.Listener, addr string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.admit() {
			c.Close()
			continue
		}
		go func() {
			defer p.release()
			forwardConn(c, addr)
		}()
	}
}

func forwardConn(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	pipe(c, up, c)
}

// maxRawLogged bounds the raw refusals one command logs (a port scan is one
// line per address and port, not thousands).
const maxRawLogged = 32

// WatchRaw reads, from the packet socket f, the first packet of each TCP
// connection the command tried past the proxy (an IPv4 or IPv6 header, then
// TCP's) and logs each address and port once.
func (p *Proxy) WatchRaw(f *os.File) {
	buf := make([]byte, 256)
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		p.logRaw(buf[:n])
	}
}

// logRaw logs the raw connection whose first packet is b, once per
// address and port, at most maxRawLogged.
func (p *Proxy) logRaw(b []byte) {
	host, port, ok := rawDestination(b)
	if !ok {
		return
	}
	k := net.JoinHostPort(host, strconv.Itoa(port))
	p.rawMu.Lock()
	if p.rawSeen == nil {
		p.rawSeen = map[string]bool{}
	}
	if p.rawSeen[k] || len(p.rawSeen) >= maxRawLogged {
		p.rawMu.Unlock()
		return
	}
	p.rawSeen[k] = true
	p.rawMu.Unlock()
	if p.Log != nil {
		p.Log(netlog.Refusal{Time: time.Now().UTC(), Host: host, Port: port, Who: p.Who, Via: "raw TCP", Fix: p.rawFix(host, port)})
	}
}

// rawDestination reads the destination of an IP packet carrying TCP.
func rawDestination(b []byte) (string, int, bool) {
	if len(b) < 1 {
		return "", 0, false
	}
	switch b[0] >> 4 {
	case 4:
		ihl := int(b[0]&0xf) * 4
		if ihl < 20 || len(b) < ihl+4 || b[9] != 6 {
			return "", 0, false
		}
		a, _ := netip.AddrFromSlice(b[16:20])
		return a.String(), int(binary.BigEndian.Uint16(b[ihl+2:])), true
	case 6:
		if len(b) < 44 || b[6] != 6 {
			return "", 0, false
		}
		a, _ := netip.AddrFromSlice(b[24:40])
		return a.String(), int(binary.BigEndian.Uint16(b[42:])), true
	}
	return "", 0, false
}
