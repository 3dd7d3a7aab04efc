package netproxy

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/piagent/piagent/internal/nethosts"
)

// ServeArg is the argument with which piagent serves one command's proxy
// (ServeMain): never typed by a person. piagent-sandbox starts it, at the
// command's first connection, from the piagent binary beside it.
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
}

// ServeMain serves the listeners it inherited until it is killed (with the
// command, by its parent's death signal).
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
	px := &Proxy{Who: s.Who}
	for _, h := range s.Entries {
		if e, err := nethosts.ParseEntry(h); err == nil {
			px.Entries = append(px.Entries, e)
		}
	}
	if s.Log != "" {
		px.Log = func(r Refusal) { logRefusal(s.Log, r) }
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
	wg.Add(len(lns))
	go func() { defer wg.Done(); px.Serve(lns[0]) }()
	for i, ln := range lns[1:] {
		go func() { defer wg.Done(); forward(ln, s.Forward[i]) }()
	}
	wg.Wait()
	return 0
}

// forward passes each connection on ln to the machine's own addr.
func forward(ln net.Listener, addr string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer up.Close()
			pipe(c, up, c)
		}()
	}
}

// maxRefusalLog bounds the log: past it, the file becomes NAME.1 (one
// older file kept).
const maxRefusalLog = 256 << 10

// logRefusal appends r to path as one JSON line, in piagent's own folder
// (which no confined command writes); never following a link there.
func logRefusal(path string, r Refusal) {
	if fi, err := os.Lstat(path); err == nil && fi.Size() > maxRefusalLog {
		os.Rename(path, path+".1")
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(r)
	f.Write(append(b, '\n'))
}
