package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PiOptions says how to run Pi in a world.
type PiOptions struct {
	Mode       string   // "json" (default) or "print"; StartRPC always uses rpc
	Prompt     string   // the message; left out when empty
	Extensions []string // loaded with -e, in order, before the adapter
	NoAdapter  bool     // do not load pi-mcp-adapter
	// Installed: the extensions are Pi packages in the agent dir's
	// settings.json (World.Install), the way `pi install` leaves them; no
	// --no-extensions and no -e, so Pi's built-in MCP client is live where
	// Pi has one.
	Installed bool
	Args      []string          // more Pi flags, placed before the prompt
	Env       map[string]string // added to, or replacing, the world's environment
	Timeout   time.Duration     // at least DefaultTimeout (timing_test.go)
}

// Environ is the environment Pi runs with: the fake home and agent dir, no
// network checks or telemetry, Node 22 first on PATH, then extra.
func (w *World) Environ(extra map[string]string) []string {
	env := map[string]string{
		"PATH":                  deps.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME":                  w.Home,
		"PI_CODING_AGENT_DIR":   w.AgentDir,
		"PI_OFFLINE":            "1",
		"PI_SKIP_VERSION_CHECK": "1",
		"PI_TELEMETRY":          "0",
		// jiti's transpile cache lives in TMPDIR: one folder of this user's,
		// shared by every run, keeps runs fast (a /tmp/jiti another user
		// made first, root's in CI, is not writable: jiti then transpiles
		// every extension at every start), under piagent pi too.
		"TMPDIR":            deps.piTmp,
		"PIAGENT_PI_TMPDIR": deps.piTmp,
		"TERM":              "dumb",
		// The extension's wait for its helper's handshake (5 s by default)
		// is a start-up budget too: on a loaded machine the suite's.
		"PIAGENT_HELPER_START_TIMEOUT_MS": strconv.FormatInt(Scaled(30*time.Second).Milliseconds(), 10),
		"NO_COLOR":                        "1",
		"LANG":                            "C.UTF-8",
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// PiFlags are Pi's command-line flags for opts (everything after cli.js).
func PiFlags(opts PiOptions) []string {
	var args []string
	switch opts.Mode {
	case "", "json":
		args = append(args, "--mode", "json")
	case "print":
		args = append(args, "-p")
	case "rpc":
		args = append(args, "--mode", "rpc")
	default:
		panic("e2e: unknown Pi mode " + opts.Mode)
	}
	args = append(args, "--no-session", "--provider", "fake", "--model", "fake-model")
	if !opts.Installed {
		args = append(args, "--no-extensions")
		for _, e := range opts.Extensions {
			args = append(args, "-e", e)
		}
		if !opts.NoAdapter {
			args = append(args, "-e", deps.adapter)
		}
	}
	args = append(args, opts.Args...)
	if opts.Prompt != "" {
		args = append(args, opts.Prompt)
	}
	return args
}

// PiCLI is the path of Pi's cli.js (executable, `#!/usr/bin/env node`).
func PiCLI() string { return deps.piCLI }

// Node is the path of the Node 22 binary.
func Node() string { return deps.node }

// Event is one record of Pi's JSON or RPC event stream.
type Event map[string]any

// Type is the event's "type".
func (e Event) Type() string { s, _ := e["type"].(string); return s }

// PiRun is the outcome of one finished process.
type PiRun struct {
	Argv     []string
	ExitCode int // -1 when it did not exit normally
	TimedOut bool
	Duration time.Duration
	Stdout   string
	Stderr   string
	Events   []Event // stdout's JSON lines, in JSON mode
}

// RunPi runs Pi to completion in the project with the world's environment.
func (w *World) RunPi(opts PiOptions) *PiRun {
	w.t.Helper()
	return w.RunProcess(append([]string{deps.node, deps.piCLI}, PiFlags(opts)...), opts)
}

// RunProcess runs any command (Pi, or piagent in front of Pi) like RunPi:
// cwd is the project, the environment is Environ(opts.Env), stdin is empty,
// and the whole process group is killed on timeout and after exit, so no
// MCP server it started is left behind. Stdout is parsed as JSON events
// unless opts.Mode is "print".
func (w *World) RunProcess(argv []string, opts PiOptions) *PiRun {
	w.t.Helper()
	timeout := budget(opts.Timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.Project
	cmd.Env = w.Environ(opts.Env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	r := &PiRun{Argv: argv, Duration: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: -1}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers in the group
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		r.ExitCode = 0
	case errors.As(err, &exitErr):
		r.ExitCode = exitErr.ExitCode()
	case ctx.Err() == nil:
		w.t.Fatalf("run %v: %v", argv, err)
	}
	r.TimedOut = ctx.Err() != nil
	if opts.Mode != "print" {
		r.Events = parseEvents(r.Stdout)
	}
	w.t.Logf("ran %s in %.2fs (exit %d)", describeArgv(argv), r.Duration.Seconds(), r.ExitCode)
	if r.TimedOut {
		w.t.Fatalf("timed out after %v:\n%s", timeout, r.Describe())
	}
	return r
}

// Exec runs a command that is not Pi itself (piagent-mcp approve NAME, …)
// in the project with the world's environment; stdout is not parsed.
func (w *World) Exec(argv ...string) *PiRun {
	w.t.Helper()
	return w.RunProcess(argv, PiOptions{Mode: "print", Timeout: 30 * time.Second})
}

func describeArgv(argv []string) string {
	if len(argv) >= 2 && argv[1] == deps.piCLI {
		return "pi " + strings.Join(argv[2:], " ")
	}
	return strings.Join(argv, " ")
}

// parseEvents reads one JSON object per LF-terminated line; other lines are
// skipped.
func parseEvents(s string) []Event {
	var out []Event
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var e Event
		if json.Unmarshal([]byte(line), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// OfType returns the events of one type.
func (r *PiRun) OfType(typ string) []Event { return eventsOfType(r.Events, typ) }

func eventsOfType(evs []Event, typ string) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

// ToolResult is one finished tool execution (tool_execution_end).
type ToolResult struct {
	ToolCallID string
	ToolName   string
	IsError    bool   // blocked calls and failures
	Text       string // the result's text parts, joined
	Details    map[string]any
}

// ToolResults are the tool executions in the stream, in order.
func (r *PiRun) ToolResults() []ToolResult { return toolResults(r.Events) }

func toolResults(evs []Event) []ToolResult {
	var out []ToolResult
	for _, e := range eventsOfType(evs, "tool_execution_end") {
		tr := ToolResult{}
		tr.ToolCallID, _ = e["toolCallId"].(string)
		tr.ToolName, _ = e["toolName"].(string)
		tr.IsError, _ = e["isError"].(bool)
		if res, ok := e["result"].(map[string]any); ok {
			tr.Text = contentText(res["content"])
			tr.Details, _ = res["details"].(map[string]any)
		}
		out = append(out, tr)
	}
	return out
}

// Blocked are the tool executions that ended in an error: a guard's block
// looks like this (tool_execution_end with isError true, the reason as text).
func (r *PiRun) Blocked() []ToolResult {
	var out []ToolResult
	for _, tr := range r.ToolResults() {
		if tr.IsError {
			out = append(out, tr)
		}
	}
	return out
}

// FinalText is the text of the last assistant message.
func (r *PiRun) FinalText() string { return finalText(r.Events) }

func finalText(evs []Event) string {
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Type() != "message_end" {
			continue
		}
		msg, _ := e["message"].(map[string]any)
		if msg["role"] == "assistant" {
			return contentText(msg["content"])
		}
	}
	return ""
}

// Describe summarises the run for a failure message.
func (r *PiRun) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\nexit: %d  duration: %.2fs  timed out: %v\n", describeArgv(r.Argv), r.ExitCode, r.Duration.Seconds(), r.TimedOut)
	var types []string
	for _, e := range r.Events {
		if t := e.Type(); t != "message_update" {
			types = append(types, t)
		}
	}
	fmt.Fprintf(&b, "events: %s\n", strings.Join(types, " "))
	for _, tr := range r.ToolResults() {
		fmt.Fprintf(&b, "tool %s (error %v): %s\n", tr.ToolName, tr.IsError, tr.Text)
	}
	if r.Events == nil {
		fmt.Fprintf(&b, "stdout:\n%s\n", tail(r.Stdout, 4000))
	}
	fmt.Fprintf(&b, "stderr:\n%s", tail(r.Stderr, 4000))
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
