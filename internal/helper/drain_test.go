package helper

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/testenv"
)

// pinnedProject is a project whose server a runs srv/s.js from the
// working tree (its package, srv/lib.js with it, pinned), approved as it is, with a .git whose
// hooks the session's watch looks after and a src/a.go to read.
func pinnedProject(t *testing.T) (home, proj string) {
	t.Helper()
	root := t.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	for p, data := range map[string]string{
		".mcp.json":        `{"mcpServers": {"a": {"command": "node", "args": ["srv/s.js"]}}}`,
		"srv/package.json": `{"name": "s"}`,
		"srv/s.js":         good,
		"srv/lib.js":       good,
		"src/a.go":         "package a\n",
		"README.md":        "# p\n",
		".git/config":      "[core]\n",
		".git/hooks/x":     "",
		".pi/x":            "",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(proj, p)), 0o755)
		if err := os.WriteFile(filepath.Join(proj, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, ".pi", "agent"), 0o755)
	g, err := gate.Load(gate.Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	if err := approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
		for _, s := range g.Servers {
			f := map[string]string{}
			for _, p := range s.Pinned {
				f[p.Path] = p.Digest
			}
			d.Set(g.Project, s.Name, approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-07T00:00:00Z", Files: f})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return home, proj
}

const (
	good = "// 0\n"
	bad  = "// 1\n" // the same size: only the content tells them apart
)

func mcpAction(c *client) string {
	c.t.Helper()
	r := c.call("decide", map[string]any{"toolName": "mcp", "input": map[string]any{"tool": "echo", "server": "a"}})["result"].(map[string]any)
	return r["action"].(string)
}

// counts are the server's counters, read under its lock.
func counts(s *Server) (onCall, between, refreshes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onCall, s.between, s.refreshes
}

// settle waits until a background refresh has run since from, and a
// little more: the events of a write are all drained (a busy /tmp above
// the project may wake it again and again, so it is not waited out).
func settle(t *testing.T, s *Server, from int64) {
	t.Helper()
	deadline := time.Now().Add(testenv.Slow(5 * time.Second))
	for time.Now().Before(deadline) {
		if _, _, r := counts(s); r > from {
			time.Sleep(100 * time.Millisecond)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	// without its watches (inotify's instances are counted per user, and
	// test processes beside this one may hold them all) there is nothing
	// to wait on: each call drains alone, which the other tests check
	s.mu.Lock()
	n := len(s.Engine.Watches(nil))
	s.mu.Unlock()
	if n < 3 {
		t.Skipf("%d of the engine's 3 watches could be made (fs.inotify.max_user_instances)", n)
	}
	t.Fatalf("no background refresh within %v of a write", testenv.Slow(5*time.Second))
}

// TestDrainBetweenCalls: after a write and a pause, the work it causes is
// done before the next call, and that call drains nothing; the answer is
// the new state's. Written files in watched folders outside the test (a
// shared /tmp) can put events in a call's way, so one clean call in ten
// writes passes; a helper without the background drain has none.
func TestDrainBetweenCalls(t *testing.T) {
	t.Parallel()
	home, proj := pinnedProject(t)
	s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
	c := startServer(t, s)
	if a := mcpAction(c); a != "allow" {
		t.Fatalf("control, approved: %s", a)
	}
	readAction(c, "src/a.go") // the link cache's watch
	clean := 0
	for i := range 10 {
		content, want := bad, "block"
		if i%2 == 1 {
			content, want = good, "allow"
		}
		_, between0, r0 := counts(s)
		// a file of the package the definition does not name: its edit
		// is answered between calls (the entry's leaves the gate's slow
		// way to the call, gate.Cache.Ahead)
		if err := os.WriteFile(filepath.Join(proj, "srv", "lib.js"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		settle(t, s, r0)
		onCall0, between1, _ := counts(s)
		if between1 == between0 {
			t.Fatalf("write %d: the background refreshes drained nothing", i)
		}
		if a := mcpAction(c); a != want {
			t.Fatalf("write %d (%q): %s, want %s", i, content, a, want)
		}
		if onCall1, _, _ := counts(s); onCall1 == onCall0 {
			clean++
		}
	}
	if clean == 0 {
		t.Fatal("every call after a write and a pause drained events itself")
	}
	t.Logf("%d of 10 calls after a write found nothing to drain", clean)
}

// TestDrainWriteThenCallAtOnce is the attack on the background drain: a
// change made just before a call, while the goroutine may be asleep,
// waking, or refreshing, must be seen by that call. The server's code, its
// definition and the session's protected files, each written and asked
// about at once, or after a short random pause, many times.
func TestDrainWriteThenCallAtOnce(t *testing.T) {
	t.Parallel()
	home, proj := pinnedProject(t)
	c := start(t, home, proj)
	if a := mcpAction(c); a != "allow" {
		t.Fatalf("control, approved: %s", a)
	}
	pause := func(i int) {
		if i%3 != 0 {
			time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond)
		}
	}
	code := filepath.Join(proj, "srv", "s.js")
	for i := range 300 {
		for _, step := range []struct{ content, want string }{{bad, "block"}, {good, "allow"}} {
			if err := os.WriteFile(code, []byte(step.content), 0o644); err != nil {
				t.Fatal(err)
			}
			pause(i)
			if a := mcpAction(c); a != step.want {
				r := c.call("decide", map[string]any{"toolName": "mcp", "input": map[string]any{"tool": "echo", "server": "a"}})
				data, _ := os.ReadFile(code)
				fi, _ := os.Stat(code)
				t.Logf("again: %v; file %q %v", r, data, fi.ModTime())
				time.Sleep(100 * time.Millisecond)
				r = c.call("decide", map[string]any{"toolName": "mcp", "input": map[string]any{"tool": "echo", "server": "a"}})
				t.Logf("later: %v", r)
				t.Fatalf("round %d: srv/s.js written %q and the call at once: %s, want %s", i, step.content, a, step.want)
			}
		}
	}
	def := filepath.Join(proj, ".mcp.json")
	orig, _ := os.ReadFile(def)
	evil := strings.Replace(string(orig), `"srv/s.js"`, `"srv/s.js", "--evil"`, 1)
	for i := range 60 {
		for _, step := range []struct{ content, want string }{{evil, "block"}, {string(orig), "allow"}} {
			if err := os.WriteFile(def, []byte(step.content), 0o644); err != nil {
				t.Fatal(err)
			}
			pause(i)
			if a := mcpAction(c); a != step.want {
				t.Fatalf("round %d: .mcp.json written and the call at once: %s, want %s", i, a, step.want)
			}
		}
	}
	// the session's protected files: a hook written, a call at once, in a
	// project of its own (a session that sees the hook first puts it
	// back, and the others then find nothing changed)
	home, proj = pinnedProject(t)
	hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
	for i := range 15 {
		s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
		c := startServer(t, s)
		if a := readAction(c, "src/a.go"); a != "allow" {
			t.Fatalf("round %d: control: %s", i, a)
		}
		if err := os.WriteFile(hook, []byte("#!/bin/sh\nid\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		pause(i)
		if a := readAction(c, "src/a.go"); a != "block" {
			t.Fatalf("round %d: a hook written and the call at once: %s", i, a)
		}
		c.in.Close()
		<-c.done
		s.Engine.Close()
		os.Remove(hook) // put back and quarantined already; a new session starts clean
	}
}

// TestDrainRacesWrites runs calls while a writer changes the server's
// code, files beside it, folders and links in the project: under -race,
// the background refreshes and the calls share nothing unguarded. Then
// the writes stop and the answers follow the files at once.
func TestDrainRacesWrites(t *testing.T) {
	t.Parallel()
	home, proj := pinnedProject(t)
	s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
	c := startServer(t, s)
	if a := mcpAction(c); a != "allow" {
		t.Fatalf("control, approved: %s", a)
	}
	code := filepath.Join(proj, "srv", "s.js")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(code, []byte([]string{good, bad}[i%2]), 0o644)
			os.WriteFile(filepath.Join(proj, "README.md"), fmt.Appendf(nil, "# %d\n", i), 0o644)
			d := filepath.Join(proj, "src", "gen")
			if i%2 == 0 {
				os.Mkdir(d, 0o755)
			} else {
				os.Remove(d)
			}
			l := filepath.Join(proj, "src", "l.go")
			os.Remove(l)
			os.Symlink([]string{"a.go", "../.git/config"}[i%2], l)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	for i := range 150 {
		mcpAction(c)
		readAction(c, "src/l.go")
		c.call("decide", map[string]any{"toolName": "bash", "input": map[string]any{"command": fmt.Sprintf("cat README.md src/l.go | head -%d", i)}})
		if i%10 == 0 {
			c.call("state", nil)
		}
	}
	close(stop)
	wg.Wait()
	for i := range 20 {
		os.WriteFile(code, []byte(bad), 0o644)
		if a := mcpAction(c); a != "block" {
			t.Fatalf("round %d after the writes: bad code allowed", i)
		}
		os.WriteFile(code, []byte(good), 0o644)
		if a := mcpAction(c); a != "allow" {
			t.Fatalf("round %d after the writes: approved code %s", i, a)
		}
	}
	// and between calls, the drain still runs
	_, between0, r0 := counts(s)
	os.WriteFile(filepath.Join(proj, "srv", "lib.js"), []byte(bad), 0o644)
	settle(t, s, r0)
	if _, between, _ := counts(s); between == between0 {
		t.Error("the background drain found nothing after the writes")
	}
}

// drainerRunning reports whether a background drain's goroutine is alive.
func drainerRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*drainer).run")
}

// TestDrainEndsWithServe: Serve's goroutine for the background drain ends
// with it, at the end of input and after broken framing.
func TestDrainEndsWithServe(t *testing.T) {
	home, proj := pinnedProject(t)
	for _, end := range []string{"eof", "framing"} {
		s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
		c := startServer(t, s)
		mcpAction(c)
		_, _, r0 := counts(s)
		os.WriteFile(filepath.Join(proj, "README.md"), []byte(end), 0o644)
		settle(t, s, r0)
		if !drainerRunning() {
			t.Fatalf("%s: no background drain while serving", end)
		}
		if end == "eof" {
			c.in.Close()
		} else {
			c.raw("not json") // answered, then Serve ends
		}
		if err := <-c.done; (err != nil) != (end == "framing") {
			t.Fatalf("%s: Serve returned %v", end, err)
		}
		deadline := time.Now().Add(testenv.Slow(time.Second))
		for drainerRunning() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the background drain outlived Serve", end)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// failing is a waiter that fails after its first waits.
type failing struct {
	waiter
	mu sync.Mutex
	n  int
}

func (f *failing) Wait(fds []int, d time.Duration) (bool, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if n > 2 {
		return false, errors.New("poll failed")
	}
	return f.waiter.Wait(fds, d)
}

// TestDrainWaitFails: when the wait fails, the goroutine ends and every
// call drains for itself, as before: a write then a call is still seen.
func TestDrainWaitFails(t *testing.T) {
	old := newWaiter
	t.Cleanup(func() { newWaiter = old })
	newWaiter = func() (waiter, error) {
		w, err := old()
		if err != nil {
			return nil, err
		}
		return &failing{waiter: w}, nil
	}
	home, proj := pinnedProject(t)
	s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
	c := startServer(t, s)
	code := filepath.Join(proj, "srv", "s.js")
	for i := range 20 {
		os.WriteFile(code, []byte(bad), 0o644)
		if i == 1 {
			time.Sleep(100 * time.Millisecond)
		}
		if a := mcpAction(c); a != "block" {
			t.Fatalf("round %d: bad code %s", i, a)
		}
		os.WriteFile(code, []byte(good), 0o644)
		if a := mcpAction(c); a != "allow" {
			t.Fatalf("round %d: approved code %s", i, a)
		}
	}
	deadline := time.Now().Add(testenv.Slow(5 * time.Second))
	for drainerRunning() {
		if time.Now().After(deadline) {
			t.Fatal("the background drain runs on after its wait failed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// and no wait failed where there is none to be had
	newWaiter = func() (waiter, error) { return nil, errors.New("no waiter") }
	c = start(t, home, proj)
	os.WriteFile(code, []byte(bad), 0o644)
	if a := mcpAction(c); a != "block" {
		t.Fatalf("without a waiter: bad code %s", a)
	}
}

// TestOneInstance: the engine's three watches (the gate's, the session's,
// the link cache's) share one inotify instance (issue 46: one read of it
// after an edit, where there were six), so the background drain polls one
// descriptor.
func TestOneInstance(t *testing.T) {
	t.Parallel()
	home, proj := pinnedProject(t)
	s := &Server{Engine: &engine.Engine{Home: home, Cwd: proj}, Build: "test"}
	c := startServer(t, s)
	mcpAction(c)
	readAction(c, "src/a.go") // the link cache's watch
	s.mu.Lock()
	ws := s.Engine.Watches(nil)
	s.mu.Unlock()
	if len(ws) < 3 {
		t.Skipf("%d of the engine's 3 watches could be made (fs.inotify.max_user_instances)", len(ws))
	}
	for _, w := range ws[1:] {
		if w.Fd() != ws[0].Fd() || w.Fd() < 0 {
			t.Fatalf("descriptors %d and %d: the engine's watches are not one instance", ws[0].Fd(), w.Fd())
		}
	}
}
