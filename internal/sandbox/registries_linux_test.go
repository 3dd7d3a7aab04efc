//go:build linux

package sandbox_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// registriesCases are the two ways "network": "registries" is applied:
// a network namespace whose loopback listener the proxy outside serves,
// and, where no namespace can be made (the fault build's mount failure),
// Landlock's TCP rule to the proxy's port with seccomp refusing UDP.
func registriesCases(w *world) []struct {
	name, bin string
	env       []string
} {
	return []struct {
		name, bin string
		env       []string
	}{
		{"namespaces", leanBin, w.env},
		{"Landlock alone", faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=mount")},
	}
}

func sandboxed(bin string, env []string, dir string, argv ...string) *exec.Cmd {
	args := append([]string{"sandbox", "exec", "--"}, argv...)
	if bin == leanBin {
		args = args[1:]
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// TestNetworkRegistries (issue 44): by default the agent's commands reach
// the network through piagent's proxy alone. Every attack on this
// machine's loopback services (TCP and UDP, IPv4 and IPv6: bash's
// /dev/tcp and /dev/udp, a reverse shell to the test's listener, Python
// and Node sockets) reaches nothing, with namespaces and under Landlock
// alone; the control is the same attack with "network": "on", which
// reaches every service. A port the person grants (allowHosts
// "127.0.0.1:PORT") is reached, and only that one.
func TestNetworkRegistries(t *testing.T) {
	needSandbox(t)
	services := listenHost(t)
	w := newWorld(t)
	policy := filepath.Join(w.home, ".pi", "piagent-policy.json")
	settle := func() { time.Sleep(150 * time.Millisecond) }
	attack := func(bin string, env []string, s *hostService) map[string]string {
		outs := map[string]string{}
		for name, script := range netAttacks(s) {
			out, _ := sandboxed(bin, env, w.proj, "/bin/bash", "-c", script).CombinedOutput()
			outs[name] = string(out)
		}
		return outs
	}
	write(t, policy, `{"version": 1, "network": "on"}`)
	for _, s := range services {
		before := s.got.Load()
		attack(leanBin, w.env, s)
		settle()
		if s.got.Load() == before {
			t.Fatalf("control: %s was not reached with the network on, so the test proves nothing", s.name)
		}
	}
	must(t, os.Remove(policy)) // the default
	for _, c := range registriesCases(w) {
		for _, s := range services {
			before := s.got.Load()
			outs := attack(c.bin, c.env, s)
			settle()
			if got := s.got.Load() - before; got != 0 {
				t.Errorf("%s: %s was reached (%d) with the default network:\n%v", c.name, s.name, got, outs)
			}
		}
	}
	// A granted port of this machine's loopback is reached, the others not.
	var tcp4 *hostService
	for _, s := range services {
		if s.name == "tcp4" {
			tcp4 = s
		}
	}
	write(t, policy, fmt.Sprintf(`{"version": 1, "allowHosts": ["127.0.0.1:%s"]}`, tcp4.port))
	for _, c := range registriesCases(w) {
		for _, s := range services {
			before := s.got.Load()
			// the command stays a moment: the proxy starts at its first
			// connection, and ends with the command
			out, _ := sandboxed(c.bin, c.env, w.proj, "/bin/bash", "-c", netAttacks(s)["bash /dev/"+s.name[:3]]+"; sleep 1").CombinedOutput()
			settle()
			if reached := s.got.Load() != before; reached != (s == tcp4) {
				t.Errorf("%s, 127.0.0.1:%s granted: %s reached %v\n%s", c.name, tcp4.port, s.name, reached, out)
			}
		}
	}
}

// testCA makes a certificate authority and a server certificate for
// names, signed by it; it returns the CA's PEM file and the server's TLS
// configuration.
func testCA(t *testing.T, dir string, names ...string) (string, *tls.Config) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "piagent test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pemFile := filepath.Join(dir, "ca.pem")
	write(t, pemFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})))
	must(t, os.Chmod(pemFile, 0o644))
	return pemFile, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// fakeGoProxy serves one module, example.test/hello v1.0.0, by the Go
// module proxy protocol.
func fakeGoProxy(t *testing.T) http.Handler {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{"go.mod": "module example.test/hello\n\ngo 1.21\n", "hello.go": "package hello\n\nconst Hello = \"hi\"\n"} {
		f, _ := zw.Create("example.test/hello@v1.0.0/" + name)
		f.Write([]byte(body))
	}
	must(t, zw.Close())
	files := map[string]string{
		"/example.test/hello/@v/list":        "v1.0.0\n",
		"/example.test/hello/@v/v1.0.0.info": `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`,
		"/example.test/hello/@v/v1.0.0.mod":  "module example.test/hello\n\ngo 1.21\n",
		"/example.test/hello/@v/v1.0.0.zip":  zb.String(),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Write([]byte(b))
			return
		}
		http.NotFound(w, r)
	})
}

// TestRegistriesProxy (issue 44): through the proxy, a host outside the
// list gets HTTP 403 whose body names the fix (piagent-mcp grant --agent
// --net HOST:PORT), and the refusal is logged with host, port and caller
// for doctor and the session notice; an allowed host is reached over
// https, and a real protocol works end to end: `go mod download` from a
// local fake of the Go module proxy (a test CA; the fault build dials the
// fake for the allowed name, so the test runs offline). The control for
// the refusal is the same request with the host allowed.
func TestRegistriesProxy(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	ca, tlsConf := testCA(t, w.root, "goproxy.test")
	srv := httptest.NewUnstartedServer(fakeGoProxy(t))
	srv.TLS = tlsConf
	srv.StartTLS()
	defer srv.Close()
	policy := filepath.Join(w.home, ".pi", "piagent-policy.json")
	logFile := filepath.Join(w.home, ".pi", "piagent", "network-refused.jsonl")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range registriesCases(w) {
		c.bin = faultBin // the fault build's proxy dials the fake for the allowed name
		env := append(append([]string{}, c.env...), "PIAGENT_SANDBOX_DIAL=goproxy.test:443="+srv.Listener.Addr().String(),
			"SSL_CERT_FILE="+ca, "GOPROXY=https://goproxy.test", "GOSUMDB=off")
		os.Remove(logFile)
		os.Remove(policy)
		// refused: plain http shows the body, https the CONNECT's 403
		out, _ := sandboxed(c.bin, env, w.proj, "/bin/bash", "-c",
			`curl -sS -m 20 http://goproxy.test/x; echo; curl -sS -m 20 --cacert "$SSL_CERT_FILE" https://goproxy.test/example.test/hello/@v/list; echo rc=$?`).CombinedOutput()
		o := string(out)
		if !strings.Contains(o, "piagent-mcp grant --agent --net goproxy.test:80") || !strings.Contains(o, "allowHosts") || !strings.Contains(o, "403") || strings.Contains(o, "v1.0.0") {
			t.Errorf("%s: a host outside the list was not refused with the fix:\n%s", c.name, o)
		}
		logged, _ := os.ReadFile(logFile)
		if !strings.Contains(string(logged), `"host":"goproxy.test","port":443,"who":"agent"`) || !strings.Contains(string(logged), `"port":80`) {
			t.Errorf("%s: the refusals were not logged: %s", c.name, logged)
		}
		// allowed: the same request reaches the fake, and go downloads
		write(t, policy, `{"version": 1, "allowHosts": ["goproxy.test"]}`)
		out, err := sandboxed(c.bin, env, w.proj, "/bin/bash", "-c",
			`curl -sS -m 20 --cacert "$SSL_CERT_FILE" https://goproxy.test/example.test/hello/@v/list && d=$(mktemp -d) && cd $d && `+goBin+` mod init x >/dev/null 2>&1 && `+goBin+` mod download -json example.test/hello@v1.0.0`).CombinedOutput()
		if o := string(out); err != nil || !strings.Contains(o, "v1.0.0") || !strings.Contains(o, `"Zip"`) {
			t.Errorf("%s: an allowed host through the proxy (go mod download): %v\n%s", c.name, err, o)
		}
	}
}

// TestRegistriesReal (PIAGENT_NET_TESTS=1): real installs through the
// proxy by default: go mod download from proxy.golang.org, npm view and
// npm ci from the npm registry; a host outside the list refused. (pip
// and git are tested against local fakes alone: TestRegistriesInstalls.)
func TestRegistriesReal(t *testing.T) {
	if os.Getenv("PIAGENT_NET_TESTS") != "1" {
		t.Skip("set PIAGENT_NET_TESTS=1 to reach the real registries")
	}
	needSandbox(t)
	w := newWorld(t)
	goBin, _ := exec.LookPath("go")
	for _, c := range registriesCases(w) {
		out, err := sandboxed(c.bin, c.env, w.proj, "/bin/bash", "-c",
			`export GOPATH=$TMPDIR/gopath; d=$(mktemp -d) && cd $d && `+goBin+` mod init x >/dev/null 2>&1 && `+goBin+` mod download -json golang.org/x/mod@v0.20.0 && npm view --json left-pad version`).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"Version": "v0.20.0"`) || !strings.Contains(string(out), `1.3.0`) {
			t.Errorf("%s: real installs: %v\n%s", c.name, err, out)
		}
		script := `set -e; d=$(mktemp -d) && cd $d
echo '{"name":"x","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}' > package.json
npm install --package-lock-only --no-audit --no-fund --no-update-notifier >/dev/null 2>&1
npm ci --no-audit --no-fund --no-update-notifier 2>&1 && node -e 'console.log("left-pad:", require("left-pad")("x", 3, "."))'`
		out, err = sandboxed(c.bin, c.env, w.proj, "/bin/bash", "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "left-pad: ..x") {
			t.Errorf("%s: real npm ci: %v\n%s", c.name, err, out)
		}
		out, _ = sandboxed(c.bin, c.env, w.proj, "curl", "-sS", "-m", "20", "https://example.com/").CombinedOutput()
		if !strings.Contains(string(out), "403") {
			t.Errorf("%s: example.com was not refused:\n%s", c.name, out)
		}
	}
}

var _ = net.Dial

// TestRegistriesFailClosed (issue 44): where the proxy cannot be set up,
// nothing runs and the message says why (the fault build's proxy that is
// never served: the init waits for the parent's word before it starts the
// command); where no namespace and no Landlock
// TCP rules exist (the fault build's mount failure and ABI 3), a person
// who chose "registries" is refused with the fix, while the default gives
// way with a warning naming the host's network. The control: the same
// command runs under the default with the proxy in place.
func TestRegistriesFailClosed(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	marker := filepath.Join(w.proj, "ran")
	run := func(fault string) (string, bool) {
		os.Remove(marker)
		out, _ := sandboxed(faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT="+fault), w.proj, "/bin/bash", "-c", "echo $HTTPS_PROXY > "+marker).CombinedOutput()
		b, err := os.ReadFile(marker)
		return string(out) + string(b), err == nil
	}
	if out, ran := run(""); !ran || !strings.Contains(out, "http://127.0.0.1:") {
		t.Fatalf("control: the command did not run through the proxy:\n%s", out)
	}
	if probed().Namespaces != "" {
		if out, ran := run("no-proxy"); ran || !strings.Contains(out, "the proxy's listener") || !strings.Contains(out, "nothing") {
			t.Errorf("the proxy's listener could not be made, and: ran %v\n%s", ran, out)
		}
	}
	// piagent installed without piagent-netproxy beside it: no proxy can
	// be served, so nothing runs, and the error names the binary and the fix
	alone := filepath.Join(t.TempDir(), "piagent")
	data, err := os.ReadFile(piagentBin)
	must(t, err)
	must(t, os.WriteFile(alone, data, 0o755))
	os.Remove(marker)
	out, _ := sandboxed(alone, w.env, w.proj, "/bin/bash", "-c", "echo $HTTPS_PROXY > "+marker).CombinedOutput()
	if _, err := os.Stat(marker); err == nil || !strings.Contains(string(out), "no piagent-netproxy beside") || !strings.Contains(string(out), "go install") {
		t.Errorf("no proxy binary: ran %v\n%s", err == nil, out)
	}
	policy := filepath.Join(w.home, ".pi", "piagent-policy.json")
	write(t, policy, `{"version": 1, "network": "registries"}`)
	if out, ran := run("mount,abi3"); ran || !strings.Contains(out, `"network": "registries"`) || !strings.Contains(out, "TCP rules need ABI 4") || !strings.Contains(out, "nothing was run") {
		t.Errorf("registries chosen, no namespace, ABI 3: ran %v\n%s", ran, out)
	}
	must(t, os.Remove(policy))
	if out, ran := run("mount,abi3"); !ran || !strings.Contains(out, "host's network") {
		t.Errorf("registries by default, no namespace, ABI 3: ran %v\n%s", ran, out)
	}
}

// TestNetGrants (issue 44): a server's network is the person's choice too.
// Through the proxy, a host outside the list is refused with the server's
// own fix (piagent-mcp grant evil --net HOST:PORT), logged with its name;
// a loopback service of this machine's is out of reach of the server and
// of the agent's commands until the person grants its port to one of
// them (piagent-mcp grant evil --net, then grant --agent --net), which
// reaches it and leaves the other still refused.
func TestNetGrants(t *testing.T) {
	needSandbox(t)
	services := listenHost(t)
	w := newWorld(t)
	var s *hostService
	for _, x := range services {
		if x.name == "tcp4" {
			s = x
		}
	}
	mcp := filepath.Join(filepath.Dir(piagentBin), "piagent-mcp")
	grantNet := func(args ...string) {
		t.Helper()
		cmd := exec.Command(mcp, append([]string{"grant"}, args...)...)
		cmd.Dir, cmd.Env = w.proj, w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("grant %v: %v\n%s", args, err, out)
		}
	}
	reach := "bash -c 'echo attack > /dev/tcp/127.0.0.1/" + s.port + " && sleep 1'"
	tries := func() (server, agent bool) {
		before := s.got.Load()
		if out, err := w.runServer(t, reach); testing.Verbose() {
			t.Logf("server: %v %s", err, out)
		}
		time.Sleep(150 * time.Millisecond)
		server = s.got.Load() != before
		before = s.got.Load()
		w.run(t, reach)
		time.Sleep(150 * time.Millisecond)
		return server, s.got.Load() != before
	}
	// Unchosen, a server keeps the host's network (it calls its own
	// API); the person's "registries" narrows it like the agent's.
	if server, agent := tries(); !server || agent {
		t.Fatalf("no network chosen: server reached %v (want the host's network), agent reached %v", server, agent)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".pi", "piagent-policy.json"), []byte(`{"version": 1, "network": "registries"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := w.runServer(t, "curl -sS -m 10 http://denied.test/x")
	if !strings.Contains(out, "piagent-mcp grant evil --net denied.test:80") {
		t.Errorf("a server's refusal does not name its grant:\n%s", out)
	}
	logged, _ := os.ReadFile(filepath.Join(w.home, ".pi", "piagent", "network-refused.jsonl"))
	if !strings.Contains(string(logged), `"who":"server evil"`) {
		t.Errorf("the server's refusal was not logged with its name: %s", logged)
	}
	if server, agent := tries(); server || agent {
		t.Fatalf("before any grant: server reached %v, agent reached %v", server, agent)
	}
	grantNet("evil", "--net", "127.0.0.1:"+s.port)
	if server, agent := tries(); !server || agent {
		t.Errorf("granted to the server: server reached %v, agent reached %v", server, agent)
	}
	grantNet("evil", "--net", "127.0.0.1:"+s.port, "--remove")
	grantNet("--agent", "--net", "127.0.0.1:"+s.port)
	if server, agent := tries(); server || !agent {
		t.Errorf("granted to the agent: server reached %v, agent reached %v", server, agent)
	}
}

// TestRegistriesStatus: sandbox status says what the default network is
// and, without a namespace, what Landlock's port rule does not cover.
func TestRegistriesStatus(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	status := func(bin string, env []string) string {
		cmd := exec.Command(bin, "sandbox", "status")
		cmd.Dir, cmd.Env = w.proj, env
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := status(piagentBin, w.env); probed().Namespaces != "" && !strings.Contains(out, "network: registries: a network namespace with its own loopback") {
		t.Errorf("status with namespaces:\n%s", out)
	}
	out := status(faultBin, append(append([]string{}, w.env...), "PIAGENT_SANDBOX_FAULT=mount"))
	if !strings.Contains(out, "Landlock lets TCP connect only to the proxy's port") || !strings.Contains(out, "not covered without a namespace") {
		t.Errorf("status under Landlock alone:\n%s", out)
	}
}

// TestRawRefused (issue 44): a raw TCP connection past the proxy, to an
// address outside (IPv4 and IPv6 documentation addresses), is refused at
// once with ECONNREFUSED ("Connection refused") in "registries" and "off"
// modes where the command has a network namespace, not left to find no
// route; in "registries" mode the proxy logs it (address, port, "raw
// TCP", the fix) although the command ends at once. The log's control is
// a connection to the command's own loopback, which is not logged.
func TestRawRefused(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	policy := filepath.Join(w.home, ".pi", "piagent-policy.json")
	logFile := filepath.Join(w.home, ".pi", "piagent", "network-refused.jsonl")
	script := `for a in 127.0.0.1/9 203.0.113.5/80 2001:db8::5/8443; do (exec 3<>/dev/tcp/$a) 2>&1; done; true`
	for _, mode := range []string{"registries", "off"} {
		write(t, policy, `{"version": 1, "network": "`+mode+`"}`)
		os.Remove(logFile)
		out, err := sandboxed(leanBin, w.env, w.proj, "/bin/bash", "-c", script).CombinedOutput()
		o := string(out)
		if err != nil || strings.Count(o, "Connection refused") != 6 || strings.Contains(o, "unreachable") {
			t.Errorf("%s: raw TCP outside: %v\n%s", mode, err, o)
		}
		logged, _ := os.ReadFile(logFile)
		if mode == "off" {
			continue
		}
		for _, want := range []string{`"host":"203.0.113.5","port":80,"who":"agent"`, `"host":"2001:db8::5","port":8443,"who":"agent"`} {
			if !strings.Contains(string(logged), want) || !strings.Contains(string(logged), `"via":"raw TCP"`) || !strings.Contains(string(logged), "HTTPS_PROXY") {
				t.Errorf("%s: the raw connection was not logged (%s): %s", mode, want, logged)
			}
		}
		if strings.Contains(string(logged), "127.0.0.1") {
			t.Errorf("%s: the command's own loopback was logged: %s", mode, logged)
		}
	}
}

// TestShortLivedClient (issue 44): a command that sends and ends at once
// (its connection's last act before it exits, within the proxy's start)
// loses nothing: what it sent to a granted loopback port of this
// machine's, and a request it sent through the proxy to an allowed host,
// arrive, with namespaces and under Landlock alone, every time of ten.
// The proxy starts at the first connection, about 20 ms after it: the
// connection waits in the listener's queue, and the sandbox waits for the
// proxy to pass it on before it ends.
func TestShortLivedClient(t *testing.T) {
	needSandbox(t)
	services := listenHost(t)
	var s *hostService
	for _, x := range services {
		if x.name == "tcp4" {
			s = x
		}
	}
	var requests atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			requests.Add(1)
		}
	}))
	defer web.Close()
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), fmt.Sprintf(`{"version": 1, "allowHosts": ["127.0.0.1:%s", "web.test:80"]}`, s.port))
	const tries = 10
	for _, c := range registriesCases(w) {
		env := append(append([]string{}, c.env...), "PIAGENT_SANDBOX_DIAL=web.test:80="+web.Listener.Addr().String())
		before, reqs := s.got.Load(), requests.Load()
		for range tries {
			out, err := sandboxed(faultBin, env, w.proj, "/bin/bash", "-c",
				`echo 0123456789 > /dev/tcp/127.0.0.1/`+s.port+`; p=${HTTP_PROXY##*:}; printf 'GET http://web.test/ping HTTP/1.1\r\nHost: web.test\r\n\r\n' > /dev/tcp/127.0.0.1/$p`).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, out)
			}
		}
		time.Sleep(200 * time.Millisecond)
		// each try: one connection counted, then 11 bytes
		if got := s.got.Load() - before; got != tries*12 {
			t.Errorf("%s: the granted port received %d of %d (connections and bytes)", c.name, got, tries*12)
		}
		if got := requests.Load() - reqs; got != tries {
			t.Errorf("%s: %d of %d requests through the proxy arrived", c.name, got, tries)
		}
	}
}

// TestRegistriesUpstream (issue 44): a person's own proxy in piagent's
// environment (HTTPS_PROXY/HTTP_PROXY with a user and password) is the way
// out of piagent's proxy: an allowed host is reached by CONNECT through
// it, with its credentials, with namespaces and under Landlock alone; the
// command's environment names piagent's proxy, never the person's (nor its
// password); a host outside the list never reaches it.
func TestRegistriesUpstream(t *testing.T) {
	needSandbox(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "web %s %s", r.Host, r.URL.Path)
	}))
	defer web.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	var seen sync.Map
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
				seen.Store(req.Method+" "+req.Host+" "+req.Header.Get("Proxy-Authorization"), true)
				up, err := net.Dial("tcp", web.Listener.Addr().String())
				if err != nil || req.Method != "CONNECT" {
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
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version": 1, "allowHosts": ["allowed.test:80"]}`)
	person := "http://alice:s3cret@" + ln.Addr().String()
	for _, c := range registriesCases(w) {
		env := append(append([]string{}, c.env...), "HTTPS_PROXY="+person, "HTTP_PROXY="+person)
		out, err := sandboxed(faultBin, env, w.proj, "/bin/bash", "-c", `curl -sS -m 20 http://allowed.test/up; echo; curl -sS -m 20 http://evil.test/; echo; env | grep -i proxy`).CombinedOutput()
		o := string(out)
		if err != nil || !strings.Contains(o, "web allowed.test /up") || !strings.Contains(o, "piagent-mcp grant --agent --net evil.test:80") {
			t.Errorf("%s: through the person's proxy: %v\n%s", c.name, err, o)
		}
		if strings.Contains(o, "s3cret") || strings.Contains(o, ln.Addr().String()) {
			t.Errorf("%s: the command sees the person's proxy:\n%s", c.name, o)
		}
	}
	var got []string
	seen.Range(func(k, _ any) bool { got = append(got, k.(string)); return true })
	if len(got) != 1 || got[0] != "CONNECT allowed.test:80 Basic YWxpY2U6czNjcmV0" {
		t.Errorf("the person's proxy saw %q", got)
	}
}

// TestUpstreamFromDefinition (issue 44): a server's definition that names
// a proxy (its env's HTTPS_PROXY/HTTP_PROXY, which the adapter sets in the
// wrapper's environment and the launcher names with --keep-env) is not
// the person's: piagent's proxy does not chain to it, so a definition
// cannot have it dial a service on this machine's loopback. The control:
// the same address as the person's own setting is chained to (and the
// service reached).
func TestUpstreamFromDefinition(t *testing.T) {
	needSandbox(t)
	var s *hostService
	for _, x := range listenHost(t) {
		if x.name == "tcp4" {
			s = x
		}
	}
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version": 1, "network": "registries", "allowHosts": ["allowed.test:80"]}`)
	svc := "http://127.0.0.1:" + s.port
	run := func(keep bool) int64 {
		args := []string{"sandbox", "exec", "--profile", "server", "--server", "evil", "--project", w.proj}
		if keep {
			args = append(args, "--keep-env", "HTTPS_PROXY,HTTP_PROXY")
		}
		cmd := exec.Command(piagentBin, append(args, "--", "/bin/sh", "-c", "curl -sS -m 2 http://allowed.test/x")...)
		cmd.Dir, cmd.Env = w.proj, append(append([]string{}, w.env...), "HTTPS_PROXY="+svc, "HTTP_PROXY="+svc)
		before := s.got.Load()
		out, _ := cmd.CombinedOutput()
		time.Sleep(150 * time.Millisecond)
		if testing.Verbose() {
			t.Logf("keep %v: %s", keep, out)
		}
		return s.got.Load() - before
	}
	if got := run(false); got == 0 {
		t.Fatal("control: the person's own proxy setting was not chained to")
	}
	if got := run(true); got != 0 {
		t.Errorf("a server definition's proxy on this machine's loopback was dialled (%d)", got)
	}
}

// TestProxyConnectionCap (issue 44): a command that opens more than 256
// connections through the proxy at once (to an allowed host that keeps
// them open) gets 256 through and the rest refused with 503 naming the
// limit, with namespaces and under Landlock alone.
func TestProxyConnectionCap(t *testing.T) {
	needSandbox(t)
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
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
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".pi", "piagent-policy.json"), `{"version": 1, "allowHosts": ["hold.test:80"]}`)
	script := `import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
socks, codes = [], {}
for i in range(300):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT hold.test:80 HTTP/1.1\r\n\r\n")
    socks.append(s)
last = ""
for s in socks:
    s.settimeout(10)
    head = s.recv(4096).decode()
    code = head.split(" ")[1] if head else "none"
    codes[code] = codes.get(code, 0) + 1
    if code == "503":
        last = head
print(sorted(codes.items()))
print(last)
`
	for _, c := range registriesCases(w) {
		env := append(append([]string{}, c.env...), "PIAGENT_SANDBOX_DIAL=hold.test:80="+hold.Addr().String())
		out, err := sandboxed(faultBin, env, w.proj, "python3", "-c", script).CombinedOutput()
		o := string(out)
		if err != nil || !strings.Contains(o, "[('200', 256), ('503', 44)]") || !strings.Contains(o, "already has 256 connections open") {
			t.Errorf("%s: 300 connections at once: %v\n%s", c.name, err, o)
		}
	}
}
