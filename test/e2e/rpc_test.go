package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// RPC is a Pi session in RPC mode (`--mode rpc`): commands go to its stdin
// as JSON lines, responses and events come back on stdout. Records are split
// on LF only, as Pi's RPC documentation requires.
type RPC struct {
	w      *World
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr syncBuffer
	done   chan struct{} // closed when stdout ends

	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced on every new event
	next    int           // WaitFor's read position
	ids     int
	closed  bool
	exit    int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StartRPC starts Pi in RPC mode in the project. opts.Mode and opts.Prompt
// are ignored. The session is closed at cleanup.
func (w *World) StartRPC(opts PiOptions) *RPC {
	w.t.Helper()
	opts.Mode, opts.Prompt = "rpc", ""
	return w.StartRPCProcess(append([]string{deps.node, deps.piCLI}, PiFlags(opts)...), opts)
}

// StartRPCProcess is StartRPC for any command that ends up running Pi in
// RPC mode (for example piagent's launcher).
func (w *World) StartRPCProcess(argv []string, opts PiOptions) *RPC {
	w.t.Helper()
	r := &RPC{w: w, done: make(chan struct{}), changed: make(chan struct{}), exit: -1}
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Dir = w.Project
	r.cmd.Env = w.Environ(opts.Env)
	r.cmd.Stderr = &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := r.cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	r.stdin = stdin
	if err := r.cmd.Start(); err != nil {
		w.t.Fatalf("start %v: %v", argv, err)
	}
	w.t.Cleanup(func() { r.Close() })
	go r.read(stdout)
	return r
}

func (r *RPC) read(stdout io.Reader) {
	defer close(r.done)
	br := bufio.NewReaderSize(stdout, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > 0 {
			var e Event
			if json.Unmarshal(line, &e) == nil {
				r.mu.Lock()
				r.events = append(r.events, e)
				close(r.changed)
				r.changed = make(chan struct{})
				r.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// Send writes one command. A command without "id" gets one; the id is
// returned so the response can be matched.
func (r *RPC) Send(command map[string]any) string {
	r.w.t.Helper()
	r.mu.Lock()
	r.ids++
	id, ok := command["id"].(string)
	if !ok {
		id = fmt.Sprintf("t%d", r.ids)
		command["id"] = id
	}
	r.mu.Unlock()
	data, err := json.Marshal(command)
	if err != nil {
		r.w.t.Fatal(err)
	}
	if _, err := r.stdin.Write(append(data, '\n')); err != nil {
		r.w.t.Fatalf("rpc send %s: %v\nstderr:\n%s", data, err, tail(r.stderr.String(), 4000))
	}
	return id
}

// Prompt sends a prompt command (a message or a slash command).
func (r *RPC) Prompt(message string) string {
	return r.Send(map[string]any{"type": "prompt", "message": message})
}

// RespondUI answers an extension_ui_request (select, input, …) with a value.
func (r *RPC) RespondUI(requestID string, value any) {
	r.Send(map[string]any{"type": "extension_ui_response", "id": requestID, "value": value})
}

// WaitFor returns the first event after the previous WaitFor's match that
// satisfies match. It fails the test when Pi exits or timeout passes first.
func (r *RPC) WaitFor(timeout time.Duration, what string, match func(Event) bool) Event {
	r.w.t.Helper()
	timeout = budget(timeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	exited := false
	for {
		r.mu.Lock()
		for i := r.next; i < len(r.events); i++ {
			if match(r.events[i]) {
				r.next = i + 1
				e := r.events[i]
				r.mu.Unlock()
				return e
			}
		}
		changed := r.changed
		r.mu.Unlock()
		if exited {
			r.w.t.Fatalf("rpc: pi exited while waiting for %s\n%s", what, r.describe())
		}
		select {
		case <-changed:
		case <-r.done:
			exited = true // scan what the reader appended before it stopped, then fail
		case <-deadline.C:
			r.w.t.Fatalf("rpc: no %s within %v\n%s", what, timeout, r.describe())
		}
	}
}

// WaitType waits (DefaultTimeout) for the next event of a type.
func (r *RPC) WaitType(typ string) Event {
	r.w.t.Helper()
	return r.WaitFor(DefaultTimeout, typ, func(e Event) bool { return e.Type() == typ })
}

// WaitResponse waits for the response to the command with this id.
func (r *RPC) WaitResponse(id string) Event {
	r.w.t.Helper()
	return r.WaitFor(DefaultTimeout, "response "+id, func(e Event) bool { return e.Type() == "response" && e["id"] == id })
}

// Events are all events read so far.
func (r *RPC) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// ToolResults are the tool executions so far.
func (r *RPC) ToolResults() []ToolResult { return toolResults(r.Events()) }

// FinalText is the text of the last assistant message so far.
func (r *RPC) FinalText() string { return finalText(r.Events()) }

// Stderr is what Pi wrote to stderr so far.
func (r *RPC) Stderr() string { return r.stderr.String() }

// Close ends the session: stdin is closed, Pi gets 10 seconds to exit, then
// its process group is killed. It returns the exit code (-1 when killed).
func (r *RPC) Close() int {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.exit
	}
	r.closed = true
	r.mu.Unlock()
	r.stdin.Close()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
	}
	pgid := r.cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- r.cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-waited
	}
	syscall.Kill(-pgid, syscall.SIGKILL) // leftovers in the group
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	r.mu.Lock()
	r.exit = code
	r.mu.Unlock()
	return code
}

func (r *RPC) describe() string {
	var b bytes.Buffer
	for _, e := range r.Events() {
		if t := e.Type(); t != "message_update" {
			b.WriteString(t + " ")
		}
	}
	return fmt.Sprintf("events: %s\nstderr:\n%s", b.String(), tail(r.stderr.String(), 4000))
}

// isConsent reports a consent dialog: a select whose first, default answer
// is "No".
func isConsent(e Event) bool {
	if e.Type() != "extension_ui_request" || e["method"] != "select" {
		return false
	}
	opts, _ := e["options"].([]any)
	return len(opts) == 2 && opts[0] == "No"
}

// Consent answers a consent dialog with its Yes option.
func (r *RPC) Consent(e Event) {
	opts, _ := e["options"].([]any)
	r.Send(map[string]any{"type": "extension_ui_response", "id": e["id"], "value": opts[1]})
}
