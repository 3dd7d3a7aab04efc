package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The guard tests run piagent's own Pi extension (extensions/pi) in the real
// Pi with the real adapter, asking the real `piagent guard serve`. Each case
// asserts on Pi's JSON event stream and on the marker file that records
// every start of the repository's MCP server.

// extensionIndex is the extension's entry point in this checkout.
func extensionIndex() string { return filepath.Join(deps.repoRoot, "extensions", "pi", "index.ts") }

// TestExtensionUnit runs the extension's own unit tests
// (extensions/pi/testdata/extension.test.ts) with Node 22's test runner:
// the protocol client against a stub helper, and every tool_call action,
// tool_result and broker path against a fake Pi. Every test the file
// declares must run and pass: a runner that ran none, or skipped some,
// fails here (scripts/test.sh runs this as its own stage).
func TestExtensionUnit(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	file := filepath.Join("extensions", "pi", "testdata", "extension.test.ts")
	src, err := os.ReadFile(filepath.Join(deps.repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	want := len(regexp.MustCompile(`(?m)^test\(`).FindAll(src, -1))
	if want < 30 {
		t.Fatalf("%s declares %d top-level tests; want at least 30 (did the file lose its tests?)", file, want)
	}
	cmd := exec.Command(deps.node, "--test", file)
	cmd.Dir = deps.repoRoot
	cmd.Env = append(os.Environ(), "PATH="+deps.nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("node --test extension.test.ts in %.2fs", time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("extension unit tests failed: %v\n%s", err, out)
	}
	counts := extensionCounts(string(out))
	for k, v := range map[string]int{"tests": want, "pass": want, "fail": 0, "cancelled": 0, "skipped": 0, "todo": 0} {
		if got, ok := counts[k]; !ok || got != v {
			t.Errorf("node --test reported %s %d (present %v), want %d", k, got, ok, v)
		}
	}
	if t.Failed() {
		t.Logf("runner output:\n%s", out)
	}
	t.Logf("extension unit tests: %d of %d passed", counts["pass"], want)
}

// extensionCounts reads the "# tests N", "# pass N", … summary lines of
// Node's TAP reporter.
func extensionCounts(out string) map[string]int {
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] = n
	}
	return counts
}

// guardWorld is repoWorld (the marker server repo-tools in the project's
// .mcp.json) with an empty metadata cache, so that nothing starts unless a
// tool call starts it.
func guardWorld(t *testing.T) (*World, Bins) {
	t.Helper()
	bins := Binaries(t)
	w := repoWorld(t)
	w.SeedCache()
	return w, bins
}

// guarded is PiOptions with piagent's extension loaded before the adapter and
// PIAGENT_BIN pointing at the built binary (or at bin, when given).
func guarded(bins Bins, opts PiOptions) PiOptions {
	opts.Extensions = append([]string{extensionIndex()}, opts.Extensions...)
	env := map[string]string{"PIAGENT_BIN": bins.Piagent}
	for k, v := range opts.Env {
		env[k] = v
	}
	opts.Env = env
	return opts
}

// requireBlocked checks that the run's only tool execution is an error whose
// text contains every one of want.
func requireBlocked(t *testing.T, r *PiRun, tool string, want ...string) ToolResult {
	t.Helper()
	trs := r.ToolResults()
	if len(trs) != 1 || trs[0].ToolName != tool || !trs[0].IsError {
		t.Fatalf("tool results = %+v, want one blocked %s call\n%s", trs, tool, r.Describe())
	}
	for _, s := range want {
		if !strings.Contains(trs[0].Text, s) {
			t.Errorf("block reason %q does not contain %q", trs[0].Text, s)
		}
	}
	return trs[0]
}

func requireNoStarts(t *testing.T, w *World) {
	t.Helper()
	if lines := w.MarkerLines(); len(lines) != 0 {
		t.Errorf("the marker server started %d time(s): %+v", len(lines), lines)
	}
}

// A proxy call to an unapproved repository server is blocked before the
// adapter can start it, and the model is told how a person approves it.
func TestGuardBlocksUnapprovedProxyCall(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	llm := w.StartLLM(proxyEcho("repo-tools", "hi"))

	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Call the repo-tools echo tool"}))
	requireExit0(t, r)

	tr := requireBlocked(t, r, "mcp", "repo-tools", "pending-approval", "approve repo-tools", "/piagent-mcp")
	requireNoStarts(t, w)
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("fake model got %d requests, want 2", len(reqs))
	}
	if msgs := reqs[1].ToolMessages(); len(msgs) != 1 || msgs[0] != tr.Text {
		t.Errorf("model was shown %q, want the block reason %q", msgs, tr.Text)
	}
	// The session notice names the server too (print and JSON modes: stderr).
	if !strings.Contains(r.Stderr, "repo-tools") || !strings.Contains(r.Stderr, "pending-approval") {
		t.Errorf("stderr has no session notice for repo-tools:\n%s", r.Stderr)
	}
}

// After `piagent-mcp approve`, the same call runs and returns the tool's
// output; editing the repository's definition blocks it again
// (approval-changed). The extension is loaded from the copy
// `piagent extension path` writes, the way the README installs it.
func TestGuardApproveThenEdit(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	ext := w.Exec(bins.Piagent, "extension", "path")
	if ext.ExitCode != 0 {
		t.Fatalf("piagent extension path: %s", ext.Describe())
	}
	index := filepath.Join(strings.TrimSpace(ext.Stdout), "index.ts")
	if !strings.HasPrefix(index, w.Home) {
		t.Fatalf("extension written to %s, outside the fake home %s", index, w.Home)
	}
	opts := func(prompt string) PiOptions {
		o := guarded(bins, PiOptions{Prompt: prompt})
		o.Extensions = []string{index}
		return o
	}

	w.StartLLM(proxyEcho("repo-tools", "hi"))
	r := w.RunPi(opts("Call it"))
	requireExit0(t, r)
	requireBlocked(t, r, "mcp", "pending-approval")
	requireNoStarts(t, w)

	if a := w.Exec(bins.PiagentMCP, "approve", "repo-tools", "--yes"); a.ExitCode != 0 {
		t.Fatalf("piagent-mcp approve: %s", a.Describe())
	}
	w.StartLLM(proxyEcho("repo-tools", "hi"))
	r = w.RunPi(opts("Call it again"))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 1 || trs[0].IsError || !strings.Contains(trs[0].Text, "echo:hi") {
		t.Fatalf("after approve: tool results = %+v, want echo:hi\n%s", trs, r.Describe())
	}
	if got, want := r.FinalText(), "FINAL: echo:hi"; got != want {
		t.Errorf("final text = %q, want %q", got, want)
	}
	if n := w.MarkerStarts("repo-tools"); n == 0 {
		t.Fatalf("the approved call did not start the marker server")
	}

	// The repository changes what the server runs: consent no longer covers it.
	srv := w.MarkerServer("repo-tools", "EXTRA=changed")
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": srv}, nil)
	// The adapter would refresh the now-stale cache entry at startup (issue 6's
	// residual risk); an empty cache keeps this case about the tool call.
	w.SeedCache()
	before := w.MarkerStarts("repo-tools")
	w.StartLLM(proxyEcho("repo-tools", "hi"))
	r = w.RunPi(opts("Call it after the edit"))
	requireExit0(t, r)
	requireBlocked(t, r, "mcp", "repo-tools", "approval-changed")
	if after := w.MarkerStarts("repo-tools"); after != before {
		t.Errorf("the marker server started %d more time(s) after the edit", after-before)
	}
}

// seedToolCache writes a metadata cache that knows each named server's echo
// tool, with the configHash the adapter computes for the definition now in
// .mcp.json, so the adapter registers direct tools and namespace proxies
// without connecting.
func seedToolCache(t *testing.T, w *World, names ...string) {
	t.Helper()
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(w.Read(w.ProjectFile(".mcp.json"))), &doc); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(deps.npmDir, "node_modules", "pi-mcp-adapter", "dist", "metadata-cache.js")
	script := fmt.Sprintf(`import { computeServerHash } from %q; process.stdout.write(computeServerHash(JSON.parse(process.argv[1])));`, mod)
	servers := map[string]any{}
	for _, name := range names {
		def, ok := doc.MCPServers[name]
		if !ok {
			t.Fatalf("no server %s in .mcp.json", name)
		}
		cmd := exec.Command(deps.node, "--input-type=module", "-e", script, string(def))
		cmd.Dir = w.Project
		cmd.Env = w.Environ(nil)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("computeServerHash: %v", err)
		}
		servers[name] = map[string]any{
			"configHash": string(out),
			"tools": []any{map[string]any{
				"name":        "echo",
				"description": "Echo the text back",
				"inputSchema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"text": map[string]any{"type": "string"}},
					"required":   []any{"text"},
				},
			}},
			"resources": []any{},
			"cachedAt":  time.Now().UnixMilli(),
		}
	}
	w.WriteJSON(w.CachePath(), map[string]any{"version": 1, "servers": servers})
}

// Every MCP tool surface the adapter offers is guarded: a direct tool (of
// repo-tools, which has directTools on), a namespace proxy (of repo-two,
// which has not: the adapter offers mcp__<ns> only for servers without
// direct tools) and an mcpScript call, each to an unapproved repository
// server, are blocked and nothing starts.
func TestGuardBlocksEverySurface(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	direct := w.MarkerServer("repo-tools")
	direct["directTools"] = true
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": direct, "repo-two": w.MarkerServer("repo-two")}, nil)
	seedToolCache(t, w, "repo-tools", "repo-two")
	llm := w.StartLLM(
		Call("repo-tools_echo", map[string]any{"text": "direct"}),
		Call("mcp__repo_two", map[string]any{"tool": "echo", "args": map[string]any{"text": "namespace"}}),
		Call("mcpScript", map[string]any{"code": `return await tools.call("repo-tools_echo", {text: "script"});`}),
	)

	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Use every surface"}))
	requireExit0(t, r)

	surfaces := []string{"repo-tools_echo", "mcp__repo_two", "mcpScript"}
	offered := llm.Requests()[0].ToolNames()
	if !slices.Contains(offered, "mcpScript") {
		t.Fatalf("the adapter did not offer mcpScript (offered %v)", offered)
	}
	// The unapproved servers' own tools are withheld from the model (issue
	// 39); a model that names them anyway is blocked at the call.
	for _, name := range surfaces[:2] {
		if slices.Contains(offered, name) {
			t.Errorf("the model was offered %s of an unapproved server (offered %v)", name, offered)
		}
	}
	if !strings.Contains(r.Stderr, "repo-tools_echo is withheld from the model") {
		t.Errorf("the adapter did not register repo-tools_echo (the cache seed is off?), or no one was told it is withheld:\n%s", r.Stderr)
	}
	trs := r.ToolResults()
	var names []string
	for _, tr := range trs {
		names = append(names, tr.ToolName)
		t.Logf("%s: %s", tr.ToolName, tr.Text)
		if !tr.IsError || !strings.Contains(tr.Text, "piagent") {
			t.Errorf("%s was not blocked by piagent: %q", tr.ToolName, tr.Text)
		}
		if strings.Contains(tr.Text, "echo:") {
			t.Errorf("%s ran: %q", tr.ToolName, tr.Text)
		}
	}
	if !slices.Equal(names, surfaces) {
		t.Fatalf("tool executions = %v, want the three surfaces in order\n%s", names, r.Describe())
	}
	for i, server := range []string{"repo-tools", "repo-two"} {
		if !strings.Contains(trs[i].Text, server) {
			t.Errorf("%s's block reason does not name %s: %q", trs[i].ToolName, server, trs[i].Text)
		}
	}
	requireNoStarts(t, w)
}

// A full-block configuration (the repository turns on direct tools with no
// prefix, so its tools could shadow Pi's own) blocks every tool call, even
// the built-in read.
func TestGuardFullBlockBlocksRead(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	w.WriteMCP(w.ProjectFile(".mcp.json"), map[string]any{"repo-tools": w.MarkerServer("repo-tools")},
		map[string]any{"settings": map[string]any{"directTools": true, "toolPrefix": "none"}})
	// Without cached tools the adapter connects at startup to learn what to
	// register (issue 6's residual risk); with them it starts nothing.
	seedToolCache(t, w, "repo-tools")
	w.Write(w.ProjectFile("README.md"), "hello\n")
	w.StartLLM(Call("read", map[string]any{"path": "README.md"}))

	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Read the README"}))
	requireExit0(t, r)

	tr := requireBlocked(t, r, "read", "piagent")
	t.Logf("read: %s", tr.Text)
	if strings.Contains(tr.Text, "hello") {
		t.Errorf("read returned the file despite the full block: %q", tr.Text)
	}
	if !strings.Contains(tr.Text, ".mcp.json") {
		t.Errorf("the block reason does not name the file to fix: %q", tr.Text)
	}
	requireNoStarts(t, w)
}

// `pi -p "/piagent-mcp"` has no UI: it prints the status table and the
// subcommands and returns without waiting and without calling the model.
// `/piagent-mcp approve NAME` typed in print mode records the decision.
func TestGuardSlashCommandWithoutUI(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	llm := w.StartLLM()

	r := w.RunPi(guarded(bins, PiOptions{Mode: "print", Prompt: "/piagent-mcp", Timeout: 30 * time.Second}))
	requireExit0(t, r)
	out := r.Stdout + r.Stderr // Pi routes an extension's stdout to stderr in print mode
	for _, want := range []string{"repo-tools", "pending-approval", "/piagent-mcp subcommands", "approve NAME", "doctor"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("the fake model got %d requests, want 0", n)
	}

	store := w.HomeFile(".pi/piagent-mcp-approvals.json")
	r = w.RunPi(guarded(bins, PiOptions{Mode: "print", Prompt: "/piagent-mcp approve repo-tools", Timeout: 30 * time.Second}))
	requireExit0(t, r)
	if data := w.Read(store); !strings.Contains(data, `"repo-tools"`) || !strings.Contains(data, `"approved"`) {
		t.Errorf("store after /piagent-mcp approve:\n%s\npi stderr:\n%s", data, r.Stderr)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "definition (merged: what will run") {
		t.Errorf("approve did not show the definition:\n%s", r.Stdout+r.Stderr)
	}
	if n := len(llm.Requests()); n != 0 {
		t.Errorf("the fake model got %d requests, want 0", n)
	}
	requireNoStarts(t, w)
}

// killerWrapper writes a PIAGENT_BIN that runs the real piagent, except that
// the first `guard serve` it starts stops answering when a request mentions
// trigger: with hang false it dies at once, with hang true it never answers
// again. Later starts are normal, so the test also sees the restart.
func killerWrapper(t *testing.T, w *World, bins Bins, trigger string, hang bool) (wrapper, log string) {
	t.Helper()
	wrapper = filepath.Join(w.Dir, "piagent-dies")
	log = filepath.Join(w.Dir, "wrapper.log")
	flag := filepath.Join(w.Dir, "wrapper.died")
	stop := "exit 9"
	if hang {
		stop = "sleep 30"
	}
	script := fmt.Sprintf(`#!/bin/sh
# A piagent whose first guard helper dies mid-session.
real=%q; log=%q; flag=%q; trigger=%q
if [ "$1" != guard ] || [ "$2" != serve ] || [ -e "$flag" ]; then
  echo "start $*" >>"$log"
  exec "$real" "$@"
fi
echo "start (dies on $trigger) $*" >>"$log"
while IFS= read -r line; do
  case "$line" in
    *"$trigger"*) : >"$flag"; echo "dying" >>"$log"; %s ;;
  esac
  printf '%%s\n' "$line"
done | "$real" "$@"
`, bins.Piagent, log, flag, trigger, stop)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, log
}

// A helper that dies mid-session blocks the next call instead of allowing it,
// and the call after that starts a fresh helper.
func TestGuardHelperDeathBlocks(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	for _, f := range []string{"a.txt", "KILL_HELPER.txt", "c.txt"} {
		w.Write(w.ProjectFile(f), "content of "+f+"\n")
	}
	wrapper, log := killerWrapper(t, w, bins, "KILL_HELPER", false)
	w.StartLLM(
		Call("read", map[string]any{"path": "a.txt"}),
		Call("read", map[string]any{"path": "KILL_HELPER.txt"}),
		Call("read", map[string]any{"path": "c.txt"}),
	)

	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Read three files", Env: map[string]string{"PIAGENT_BIN": wrapper}}))
	requireExit0(t, r)

	trs := r.ToolResults()
	if len(trs) != 3 {
		t.Fatalf("tool results = %+v, want 3\n%s", trs, r.Describe())
	}
	if trs[0].IsError || !strings.Contains(trs[0].Text, "content of a.txt") {
		t.Errorf("first read (helper alive) = %+v, want the file", trs[0])
	}
	if !trs[1].IsError || strings.Contains(trs[1].Text, "content of") ||
		!strings.Contains(trs[1].Text, "not running") || !strings.Contains(trs[1].Text, "every tool call is blocked") ||
		!strings.Contains(trs[1].Text, "PIAGENT_BIN") {
		t.Errorf("second read (helper died) = %+v, want a block that says the helper is not running and how to fix it", trs[1])
	}
	if trs[2].IsError || !strings.Contains(trs[2].Text, "content of c.txt") {
		t.Errorf("third read (helper restarted) = %+v, want the file", trs[2])
	}
	if got := w.Read(log); strings.Count(got, "start") < 2 || !strings.Contains(got, "dying") {
		t.Errorf("wrapper log does not show a death and a restart:\n%s", got)
	}
	requireNoStarts(t, w)
}

// A helper that stops answering is given 2 seconds, then the call is
// blocked, the helper killed, and the next call starts a new one.
func TestGuardHelperTimeoutBlocks(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	for _, f := range []string{"HANG_HELPER.txt", "b.txt"} {
		w.Write(w.ProjectFile(f), "content of "+f+"\n")
	}
	wrapper, _ := killerWrapper(t, w, bins, "HANG_HELPER", true)
	w.StartLLM(
		Call("read", map[string]any{"path": "HANG_HELPER.txt"}),
		Call("read", map[string]any{"path": "b.txt"}),
	)

	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Read two files", Env: map[string]string{"PIAGENT_BIN": wrapper}}))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 2 {
		t.Fatalf("tool results = %+v, want 2\n%s", trs, r.Describe())
	}
	if !trs[0].IsError || !strings.Contains(trs[0].Text, "did not answer decide within 2s") ||
		!strings.Contains(trs[0].Text, "every tool call is blocked") {
		t.Errorf("first read (helper hangs) = %+v, want a block after the 2s timeout", trs[0])
	}
	if trs[1].IsError || !strings.Contains(trs[1].Text, "content of b.txt") {
		t.Errorf("second read (new helper) = %+v, want the file", trs[1])
	}
	if r.Duration < 2*time.Second {
		t.Errorf("run took %v, less than the 2s timeout", r.Duration)
	}
}

// A missing helper blocks every call; it never fails open.
func TestGuardMissingHelperBlocks(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	w.Write(w.ProjectFile("a.txt"), "secret-ish\n")
	w.StartLLM(Call("read", map[string]any{"path": "a.txt"}))

	missing := filepath.Join(w.Dir, "no-such-piagent")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Read", Env: map[string]string{"PIAGENT_BIN": missing}}))
	requireExit0(t, r)
	// Blocked at tool_call (not merely withheld at tool_result, the second layer).
	tr := requireBlocked(t, r, "read", "not running", "every tool call is blocked", "PIAGENT_BIN")
	if strings.Contains(tr.Text, "secret-ish") {
		t.Errorf("the file leaked: %q", tr.Text)
	}
}

// The gate guards itself: the model's bash call of `piagent-mcp approve` is
// blocked, and the approval store is unchanged. piagent-mcp is on PATH, so
// the command would really approve if it ran.
func TestGuardBashApproveBlocked(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	store := w.HomeFile(".pi/piagent-mcp-approvals.json")
	w.StartLLM(Call("bash", map[string]any{"command": "piagent-mcp approve repo-tools --yes"}))

	path := deps.nodeBin + string(os.PathListSeparator) + deps.binDir + string(os.PathListSeparator) + os.Getenv("PATH")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Approve it yourself", Env: map[string]string{"PATH": path}}))
	requireExit0(t, r)

	tr := requireBlocked(t, r, "bash", "piagent")
	if strings.Contains(tr.Text, "approved repo-tools") {
		t.Errorf("the approve command ran: %q", tr.Text)
	}
	if data := w.Read(store); data != "" {
		t.Errorf("the approval store was written:\n%s", data)
	}
	requireNoStarts(t, w)
}

// With a UI (RPC mode), /piagent-mcp with no argument offers a menu built
// from the state: approve is offered because repo-tools is pending, enable is
// not because nothing is disabled; with one pending server it asks no
// "which server", shows the definition and asks for consent. The next prompt
// in the same session then runs the call.
func TestGuardMenuApproveRPC(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	w.StartLLM(proxyEcho("repo-tools", "menu"))
	s := w.StartRPC(guarded(bins, PiOptions{}))

	s.Prompt("/piagent-mcp")
	sel := s.WaitFor(30*time.Second, "menu select", func(e Event) bool {
		return e.Type() == "extension_ui_request" && e["method"] == "select"
	})
	opts, _ := sel["options"].([]any)
	var approve string
	var labels []string
	for _, o := range opts {
		l, _ := o.(string)
		labels = append(labels, l)
		if strings.HasPrefix(l, "approve") {
			approve = l
		}
	}
	if approve == "" {
		t.Fatalf("menu %q has no approve entry", labels)
	}
	for _, l := range labels {
		if strings.HasPrefix(l, "enable") {
			t.Errorf("menu offers %q although nothing is disabled", l)
		}
	}
	s.RespondUI(sel["id"].(string), approve)

	conf := s.WaitFor(30*time.Second, "consent dialog", func(e Event) bool {
		return e.Type() == "extension_ui_request" && (e["method"] == "confirm" || e["method"] == "select")
	})
	if !isConsent(conf) {
		t.Fatalf("after choosing approve got %v, want the consent dialog, No first (one pending server needs no choice)", conf)
	}
	if msg, _ := conf["title"].(string); !strings.Contains(msg, "repo-tools") || !strings.Contains(msg, "approval digest: sha256:") {
		t.Errorf("consent dialog does not show the definition: %q", msg)
	}
	s.Consent(conf)
	s.WaitFor(30*time.Second, "approved notice", func(e Event) bool {
		msg, _ := e["message"].(string)
		return e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "approved repo-tools")
	})

	s.Prompt("Call it")
	s.WaitType("agent_end")
	if got, want := s.FinalText(), "FINAL: echo:menu"; got != want {
		t.Errorf("after approving from the menu, final text = %q, want %q\n%s", got, want, s.describe())
	}
	s.Close()
	if w.MarkerStarts("repo-tools") == 0 {
		t.Error("the approved call did not start the marker server")
	}
}

// approveAndReload types /piagent-mcp approve NAME in an RPC session under
// the launcher, says yes at the consent dialog, and waits for the extension
// to announce the reload.
func approveAndReload(s *RPC, name string) {
	s.Prompt("/piagent-mcp approve " + name)
	conf := s.WaitFor(30*time.Second, "consent dialog", isConsent)
	s.Consent(conf)
	s.WaitFor(30*time.Second, "reload notice", func(e Event) bool {
		msg, _ := e["message"].(string)
		return e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "reloading")
	})
}

// Under the launcher (PIAGENT_LAUNCHER=1), a decision made with /piagent-mcp
// reloads the session (ctx.reload) so the adapter sees the rewritten
// configuration, and the next prompt's call runs in the reloaded session.
func TestGuardLauncherReloadsAfterApprove(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	w.StartLLM(proxyEcho("repo-tools", "reloaded"))
	s := w.StartRPC(guarded(bins, PiOptions{Env: map[string]string{"PIAGENT_LAUNCHER": "1"}}))

	approveAndReload(s, "repo-tools")

	s.Prompt("Call it")
	s.WaitType("agent_end")
	if got, want := s.FinalText(), "FINAL: echo:reloaded"; got != want {
		t.Errorf("after approve and reload, final text = %q, want %q\n%s", got, want, s.describe())
	}
	s.Close()
}
