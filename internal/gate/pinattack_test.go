package gate

import (
	"github.com/piagent/piagent/internal/safefile"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
)

// pinWorld writes files (relative to the project; a value starting "->"
// makes a link) and approves every repository server as it is.
func pinWorld(t *testing.T, files map[string]string) (home, proj string) {
	t.Helper()
	root := t.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	for _, b := range []string{"node", "python3"} {
		os.WriteFile(filepath.Join(root, "bin", b), []byte("#!/bin/sh\n"), 0o755)
	}
	for p, data := range files {
		full := filepath.Join(proj, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		var err error
		if target, ok := strings.CutPrefix(data, "->"); ok {
			err = os.Symlink(strings.ReplaceAll(target, "$ROOT", root), full)
		} else {
			err = os.WriteFile(full, []byte(data), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := Load(pinOpts(home, proj))
	if err != nil {
		t.Fatal(err)
	}
	st := approval.Open(filepath.Join(home, ".pi", "piagent-mcp-approvals.json"))
	if err := st.Update(func(d *approval.Data) error {
		for _, s := range g.Servers {
			if !s.Repository {
				continue
			}
			files := map[string]string{}
			for _, p := range s.Pinned {
				if p.Digest != "" {
					files[p.Path] = p.Digest
				}
			}
			d.Set(g.Project, s.Name, approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-05T00:00:00Z", Files: files})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return home, proj
}

// pinOpts loads the gate with the fake node and python3 on PATH.
func pinOpts(home, proj string) Options {
	bin := filepath.Join(filepath.Dir(proj), "bin")
	return Options{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == "PATH" {
			return bin
		}
		return ""
	}}
}

func pinState(t *testing.T, home, proj, name string) (string, string) {
	t.Helper()
	g, err := Load(pinOpts(home, proj))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := g.Server(name)
	if !ok {
		t.Fatalf("no server %s", name)
	}
	return s.State, s.Reason
}

// TestPinAttacks: the review's ways round the package pin (issue 38, item
// 6), each carried out after approval. Each case's control is the state
// before the attack: ready. The attack must leave the server blocked
// (approval-changed, or pending when it cannot be pinned at all).
func TestPinAttacks(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		attack func(proj string) error
		want   string // in the reason
	}{
		{"package folder reached through a link",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["app/server.js"]}}}`,
				"real/package.json": `{"name":"r"}`, "real/server.js": `require("./lib")`, "real/lib.js": "1", "app": "->real"},
			func(proj string) error {
				return os.WriteFile(filepath.Join(proj, "real", "lib.js"), []byte("evil"), 0o644)
			},
			"real/lib.js changed"},
		{"a dependency hoisted to the workspace root",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["packages/srv/server.js"]}}}`,
				"packages/srv/package.json": `{"name":"srv"}`, "packages/srv/server.js": `require("dep")`, "node_modules/dep/index.js": "1",
				"packages/other/package.json": `{"name":"o"}`},
			func(proj string) error {
				return os.WriteFile(filepath.Join(proj, "node_modules", "dep", "index.js"), []byte("evil"), 0o644)
			},
			"node_modules/dep/index.js changed"},
		{"a .git folder inside the package",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
				"srv/package.json": `{"name":"srv"}`, "srv/server.js": `require("./vendor/.git/x")`, "srv/vendor/.git/x.js": "1"},
			func(proj string) error {
				return os.WriteFile(filepath.Join(proj, "srv", "vendor", ".git", "x.js"), []byte("evil"), 0o644)
			},
			"srv/vendor/.git/x.js changed"},
		{"a new file in a folder on PYTHONPATH",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"python3","args":["srv/main.py"],"env":{"PYTHONPATH":"pylib"}}}}`,
				"srv/pyproject.toml": "", "srv/main.py": "import json", "pylib/helpers.py": "X = 1"},
			func(proj string) error {
				return os.WriteFile(filepath.Join(proj, "pylib", "json.py"), []byte("evil"), 0o644)
			},
			"pylib/json.py is new since"},
		{"a folder that cannot be listed",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
				"srv/package.json": `{"name":"srv"}`, "srv/server.js": `require("./lib/x")`, "srv/lib/x.js": "1"},
			func(proj string) error { return os.Chmod(filepath.Join(proj, "srv", "lib"), 0o311) },
			"the folder srv/lib cannot be listed"},
		{"a file whose name is not UTF-8",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
				"srv/package.json": `{"name":"srv"}`, "srv/server.js": "1"},
			func(proj string) error {
				return os.WriteFile(filepath.Join(proj, "srv", "caf\xe9.js"), []byte("x"), 0o644)
			},
			`has a name that is not UTF-8`},
		{"a package folder linked out of the project",
			map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["app/server.js"]}}}`,
				"app/package.json": `{"name":"a"}`, "app/server.js": "1", "ext": "->$ROOT/outside"},
			func(proj string) error {
				out := filepath.Join(filepath.Dir(proj), "outside")
				os.MkdirAll(out, 0o755)
				os.WriteFile(filepath.Join(out, "server.js"), []byte("evil"), 0o644)
				os.WriteFile(filepath.Join(out, "package.json"), []byte(`{}`), 0o644)
				return os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"s":{"command":"node","args":["ext/server.js"]}}}`), 0o644)
			},
			"ext is a link to a folder outside the project"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.name, "cannot be listed") && os.Geteuid() == 0 {
				t.Skip("root lists any folder; the ordinary user's run carries this case")
			}
			home, proj := pinWorld(t, c.files)
			if st, why := pinState(t, home, proj, "s"); st != Ready {
				t.Fatalf("control: %s (%s)", st, why)
			}
			if err := c.attack(proj); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(filepath.Join(proj, "srv", "lib"), 0o755)
			st, why := pinState(t, home, proj, "s")
			if !Blocks(st) || !strings.Contains(why, c.want) {
				t.Fatalf("after the attack: %s (%s), want blocked with %q", st, why, c.want)
			}
		})
	}
}

// TestCacheRechecks: a change inotify does not report (a write through a
// hard link in a folder the gate does not watch) is seen by the cached
// gate within recheck, while other files are written all along.
func TestCacheRechecks(t *testing.T) {
	home, proj := pinWorld(t, map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
		"srv/package.json": `{"name":"srv"}`, "srv/server.js": `require("./lib")`, "srv/lib.js": "1"})
	old := recheck
	recheck = 300 * time.Millisecond
	defer func() { recheck = old }()
	alias := filepath.Join(t.TempDir(), "alias.js") // a folder no watch looks at
	if err := os.Link(filepath.Join(proj, "srv", "lib.js"), alias); err != nil {
		t.Skip("no hard links here:", err)
	}
	noise := filepath.Join(proj, "noise.txt")
	os.WriteFile(noise, []byte{0}, 0o644) // made before: later writes change only it
	o := pinOpts(home, proj)
	var c Cache
	g, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("s"); s.State != Ready {
		t.Fatalf("control: %s (%s)", s.State, s.Reason)
	}
	f, err := os.OpenFile(alias, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("evil")
	f.Close()
	deadline := time.Now().Add(recheck + 2*time.Second)
	for i := 0; ; i++ {
		// a stream of events beside the gate (a busy project) must not
		// put the re-check off
		os.WriteFile(noise, []byte{byte(i)}, 0o644)
		g, err := c.Get(o)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := g.Server("s")
		if s.State == ApprovalChanged {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the write through a hard link was not seen within %v: %s", recheck, s.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCacheSettles: a file edited during the session stamps with its
// content's digest while its times are recent; once they are old, the
// re-check finds the same file and content and keeps the gate (it used to
// reload everything), and a content that differs at equal times is a
// change.
func TestCacheSettles(t *testing.T) {
	home, proj := pinWorld(t, map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
		"srv/package.json": `{"name":"srv"}`, "srv/server.js": `require("./lib")`, "srv/lib.js": "1"})
	old := recheck
	recheck = 300 * time.Millisecond
	defer func() { recheck = old }()
	o := pinOpts(home, proj)
	var c Cache
	if _, err := c.Get(o); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(proj, "srv", "lib.js")
	os.WriteFile(lib, []byte("2"), 0o644)
	g1, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g1.Server("s"); s.State != ApprovalChanged {
		t.Fatalf("after the edit: %s", s.State)
	}
	racy := stampOf(lib)
	if racy.Sum == ([32]byte{}) {
		t.Fatal("a file just written stamps without its digest")
	}
	time.Sleep(safefile.RacyWindow + recheck)
	g2, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if g2 != g1 {
		t.Error("the re-check after the edit settled computed the gate again")
	}
	// the same times, another content: not the same file
	settled := racy
	settled.Sum = [32]byte{}
	if !settledSame(racy.Stamp, settled.Stamp, lib) {
		t.Fatal("control: the same content is not recognised")
	}
	os.WriteFile(lib, []byte("3"), 0o644)
	if settledSame(racy.Stamp, settled.Stamp, lib) {
		t.Error("another content with the same stamp passed as the same")
	}
}

// A pinned file rewritten through a second name beside it (a hard link in
// a watched folder) is an event on that name alone: the cached gate sees
// the change at once, not at the re-check.
func TestCacheHardLinkBeside(t *testing.T) {
	home, proj := pinWorld(t, map[string]string{".mcp.json": `{"mcpServers":{"s":{"command":"node","args":["srv/server.js"]}}}`,
		"srv/package.json": `{"name":"srv"}`, "srv/server.js": `require("./lib")`, "srv/lib.js": "1"})
	alias := filepath.Join(proj, "notes.txt") // beside: watched, not pinned
	if err := os.Link(filepath.Join(proj, "srv", "lib.js"), alias); err != nil {
		t.Skip("no hard links here:", err)
	}
	o := pinOpts(home, proj)
	var c Cache
	g, err := c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("s"); s.State != Ready {
		t.Fatalf("control: %s (%s)", s.State, s.Reason)
	}
	f, err := os.OpenFile(alias, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("evil")
	f.Close()
	g, err = c.Get(o)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Server("s"); s.State != ApprovalChanged {
		t.Fatalf("after the write through the second name: %s", s.State)
	}
}
