//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/piagent/piagent/internal/nethosts"
)

// NoProxyError refuses a command whose network goes through the proxy
// where nothing can hold it to the proxy: no namespace, and a Landlock
// without TCP rules.
type NoProxyError struct{ Cause string }

func (e *NoProxyError) Error() string {
	return "the network through piagent's proxy (\"network\": \"registries\") cannot be applied here: " + e.Cause
}

// proxyEnv points the command's HTTP clients (npm, go, pip, git, curl,
// and Node's own fetch where Node reads NODE_USE_ENV_PROXY: 22.21, 24.5
// and later) at the proxy; its own loopback is reached directly.
func proxyEnv(port int) []string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	no := "localhost,127.0.0.1,::1"
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"npm_config_proxy=" + u, "npm_config_https_proxy=" + u, "NODE_USE_ENV_PROXY=1", "NO_PROXY=" + no, "no_proxy=" + no}
}

// entries parses the profile's allowed hosts (checked when they were
// recorded; one that no longer parses is left out).
func entries(p Profile) []nethosts.Entry {
	var out []nethosts.Entry
	for _, h := range p.AllowHosts {
		if e, err := nethosts.ParseEntry(h); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// loopbackGrants are the machine's loopback addresses the person granted,
// each as host:port.
func loopbackGrants(p Profile) []string {
	var out []string
	for _, e := range entries(p) {
		if !e.Loopback() {
			continue
		}
		switch e.Host {
		case "localhost":
			out = append(out, nethosts.JoinHostPort("127.0.0.1", e.Port), nethosts.JoinHostPort("::1", e.Port))
		default:
			out = append(out, nethosts.JoinHostPort(e.Host, e.Port))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// proxyPortInNamespace picks the proxy's port inside a fresh namespace: a
// high port no grant uses (nothing else listens there).
func proxyPortInNamespace(p Profile) int {
	taken := map[int]bool{}
	for _, e := range entries(p) {
		taken[e.Port] = true
	}
	for {
		if port := 20000 + rand.IntN(40000); !taken[port] {
			return port
		}
	}
}

// listenAddrs are the init's listeners: the proxy's, then the grants.
func listenAddrs(p Profile, port int) []string {
	return append([]string{"127.0.0.1:" + strconv.Itoa(port)}, loopbackGrants(p)...)
}

// listenTCP listens on addr (IP:PORT) without the net package.
func listenTCP(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, err
	}
	family := unix.AF_INET
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	if ap.Addr().Is6() {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	s, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Bind(s, sa); err != nil {
		unix.Close(s)
		return -1, fmt.Errorf("bind %s: %w", addr, err)
	}
	if err := unix.Listen(s, 128); err != nil {
		unix.Close(s)
		return -1, err
	}
	return s, nil
}

// handListeners (in the init, inside the network namespace) listens on
// each address, sends the listeners on descriptor fd (and, with watch, the
// packet socket that sees raw connections refused: refusalWatch), keeping
// none, and waits for the parent's word that it serves them: the command
// starts only then.
func handListeners(fd int, addrs []string, watch bool) error {
	defer unix.Close(fd)
	var fds []int
	defer func() {
		for _, f := range fds {
			unix.Close(f)
		}
	}()
	for _, a := range addrs {
		s, err := listenTCP(a)
		if err != nil {
			return err
		}
		fds = append(fds, s)
	}
	if watch {
		s, err := refusalWatch()
		if err != nil {
			return fmt.Errorf("the packet socket that sees raw connections refused: %w", err)
		}
		fds = append(fds, s)
	}
	if err := unix.Sendmsg(fd, []byte{1}, unix.UnixRights(fds...), nil, 0); err != nil {
		return err
	}
	ack := make([]byte, 1)
	if n, err := unix.Read(fd, ack); n != 1 || ack[0] != 1 {
		return fmt.Errorf("the proxy outside did not start (%v)", err)
	}
	return nil
}

// recvListeners receives the init's n listeners on f.
func recvListeners(f *os.File, n int) ([]*os.File, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*n))
	_, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no listeners came back from the init")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, err
	}
	var out []*os.File
	for _, fd := range fds {
		out = append(out, os.NewFile(uintptr(fd), "listener"))
	}
	if len(out) != n {
		for _, f := range out {
			f.Close()
		}
		return nil, fmt.Errorf("%d listeners came back from the init, not %d", len(out), n)
	}
	return out, nil
}

// serveListeners receives the init's listeners and serves them from
// outside the sandbox until this process ends, then tells the init so.
func serveListeners(f *os.File, p Profile, addrs, upstream []string) (*lazyProxy, error) {
	files, err := recvListeners(f, len(addrs)+1)
	if err != nil {
		return nil, err
	}
	if faultHas(faultFromEnv(), "no-proxy") {
		for _, lf := range files {
			lf.Close()
		}
		return nil, errors.New("injected: the proxy cannot be served")
	}
	lp, err := serveLazily(files, p, addrs[1:], true, upstream)
	if err != nil {
		return nil, err
	}
	_, err = f.Write([]byte{1})
	return lp, err
}

// proxyBinary is the program that serves the proxy: piagent-netproxy,
// beside this binary (piagent or piagent-sandbox). It alone links the
// network code: the net package would make piagent-sandbox a cgo binary
// (every command's start about 12 ms slower), and net/http and crypto/tls
// in piagent made the guard's helper, the same binary, hold about 2 MB
// more of resident code.
func proxyBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	bin := filepath.Join(filepath.Dir(exe), proxyName)
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("no %s beside %s to serve the network proxy: install piagent's binaries together (go install github.com/piagent/piagent/cmd/...)", proxyName, exe)
	}
	return bin, nil
}

// The proxy's entry point and its spec, as package netproxy names them
// (it links the network code; this package must not).
const (
	proxyName     = "piagent-netproxy"
	proxyServeArg = "__piagent-netproxy"
	proxySpecEnv  = "PIAGENT_NETPROXY_SPEC"
)

type netproxySpec struct {
	Entries []string          `json:"entries"`
	Who     string            `json:"who"`
	Log     string            `json:"log"`
	Forward []string          `json:"forward"`
	Dial    map[string]string `json:"dial,omitempty"`
	Watch   bool              `json:"watch,omitempty"`
}

// lazyProxy is one command's proxy, started at its first connection.
type lazyProxy struct {
	mu    sync.Mutex
	files []*os.File
	bin   string
	spec  []byte
	// upstream is the person's own proxy settings, for the proxy's
	// environment alone.
	upstream []string
	cmd      *exec.Cmd
	// drain is the write end of the proxy's standard input: closed, the
	// proxy takes what is queued, finishes its connections and ends.
	drain *os.File
	done  chan struct{}
}

// serveLazily watches the listeners and, at the first connection, starts
// piagent's proxy (netproxy.ServeMain) on them: a command that makes no
// connection pays for no process. The proxy ends with this process (its
// death signal follows a thread that never ends), after finish. If it
// cannot start, the listeners are closed: every connection is refused,
// never given the host's network.
func serveLazily(files []*os.File, p Profile, forward []string, watch bool, upstream []string) (*lazyProxy, error) {
	bin, err := proxyBinary()
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	who := p.NetWho
	if who == "" {
		who = "agent"
	}
	spec, err := json.Marshal(netproxySpec{Entries: p.AllowHosts, Who: who, Log: p.NetLog, Forward: forward, Dial: faultDial(), Watch: watch})
	if err != nil {
		return nil, err
	}
	lp := &lazyProxy{files: files, bin: bin, spec: spec, upstream: upstream}
	pfds := lp.pollFds()
	go func() {
		runtime.LockOSThread() // never unlocked
		for {
			if _, err := unix.Poll(pfds, -1); err != unix.EINTR {
				break
			}
		}
		lp.start()
		select {}
	}()
	return lp, nil
}

func (lp *lazyProxy) pollFds() []unix.PollFd {
	pfds := make([]unix.PollFd, len(lp.files))
	for i, f := range lp.files {
		pfds[i] = unix.PollFd{Fd: int32(f.Fd()), Events: unix.POLLIN}
	}
	return pfds
}

// start starts the proxy, once, from a thread that never ends (its death
// signal follows that thread).
func (lp *lazyProxy) start() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if lp.files == nil {
		return
	}
	runtime.LockOSThread() // never unlocked
	files := lp.files
	lp.files = nil
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "piagent: the network proxy could not start (%v): every connection is refused\n", err)
		return
	}
	defer r.Close()
	cmd := exec.Command(lp.bin, proxyServeArg)
	cmd.Env = []string{proxySpecEnv + "=" + string(lp.spec), "GOMAXPROCS=2"}
	cmd.Env = append(cmd.Env, lp.upstream...)
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintf(os.Stderr, "piagent: the network proxy could not start (%v): every connection is refused\n", err)
		return
	}
	lp.cmd, lp.drain, lp.done = cmd, w, make(chan struct{})
	go func() { cmd.Wait(); close(lp.done) }()
}

// drainBound is how long, once the command has ended, the proxy may take
// to pass on what the command sent and finish its connections.
const drainBound = 10 * time.Second

// finish is called when the command has ended: the connections it made
// (queued, or still being passed on) are finished before this process
// exits, so that what a command sent just before it ended is not lost.
// A proxy not started yet is started if anything is queued.
func (lp *lazyProxy) finish() {
	if lp == nil {
		return
	}
	lp.mu.Lock()
	pending := false
	if lp.files != nil {
		pfds := lp.pollFds()
		n, _ := unix.Poll(pfds, 0)
		pending = n > 0
	}
	lp.mu.Unlock()
	if pending {
		lp.start()
	}
	lp.mu.Lock()
	drain, done := lp.drain, lp.done
	lp.drain = nil
	lp.mu.Unlock()
	if drain == nil {
		return
	}
	drain.Close()
	select {
	case <-done:
	case <-time.After(drainBound):
	}
}

// execLandlockProxied runs the command where no namespace can be made:
// this process serves the proxy on a random port of the machine's
// loopback, and the command, a child confined by a thread of its own,
// may connect by TCP to that port alone (and to the ports of granted
// loopback services); seccomp refuses UDP and every other family.
// Landlock filters by port, not by address: a host service on the same
// port would be reachable ('sandbox status' says so).
func execLandlockProxied(p Profile, st Status, path string, argv, env, upstream []string) error {
	fd, err := listenTCP("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the network proxy: %w; nothing was run", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	port := sa.(*unix.SockaddrInet4).Port
	lp, err := serveLazily([]*os.File{os.NewFile(uintptr(fd), "listener")}, p, nil, false, upstream)
	if err != nil {
		return fmt.Errorf("the network proxy: %w; nothing was run", err)
	}
	connect := []int{port}
	for _, e := range entries(p) {
		if e.Loopback() {
			connect = append(connect, e.Port)
		}
	}
	env = mergeEnv(env, proxyEnv(port))
	// As the init is: the command, same user, cannot ptrace this process
	// or open its /proc files (Landlock refuses that too); supervise makes
	// it so, and kills what the command leaves behind.
	return supervise(path, argv, env, func() error {
		return confineThread(p, st.ABI, false, false, connect, faultFromEnv())
	}, lp.finish)
}
