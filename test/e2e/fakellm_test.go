package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Step is one scripted reply of the fake model: a tool call, several tool
// calls in one message, or a final text. When the script runs out the model
// answers "FINAL: <text of the last tool message it was sent>".
type Step struct {
	ToolCall  *ToolCall  `json:"tool_call,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Text      string     `json:"text,omitempty"`
}

// ToolCall is a function call the fake model makes.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

// Call is a step that calls one tool.
func Call(name string, args any) Step { return Step{ToolCall: &ToolCall{Name: name, Arguments: args}} }

// Say is a step that answers with text.
func Say(text string) Step { return Step{Text: text} }

// FakeLLM is a running fake-llm.mjs.
type FakeLLM struct {
	Port    int
	LogFile string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *bytes.Buffer
	stopped atomic.Bool
}

var llmSeq atomic.Int64

// StartLLM starts a fake model with the given script and points the world's
// models.json (provider "fake", model "fake-model") at it. A model already
// running in this world is stopped first. It is stopped at cleanup.
func (w *World) StartLLM(steps ...Step) *FakeLLM {
	w.t.Helper()
	if w.LLM != nil {
		w.LLM.Stop()
	}
	if steps == nil {
		steps = []Step{}
	}
	n := llmSeq.Add(1)
	dir := filepath.Join(w.Dir, fmt.Sprintf("llm-%d", n))
	script := filepath.Join(dir, "script.json")
	portFile := filepath.Join(dir, "port")
	l := &FakeLLM{LogFile: filepath.Join(dir, "requests.ndjson"), stderr: new(bytes.Buffer)}
	w.WriteJSON(script, steps)

	l.cmd = exec.Command(deps.node, Fixture("fake-llm.mjs"), "--script", script, "--port-file", portFile, "--log", l.LogFile)
	l.cmd.Env = []string{"PATH=" + deps.nodeBin, "HOME=" + w.Home}
	l.cmd.Stderr = l.stderr
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := l.cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	l.stdin = stdin
	if err := l.cmd.Start(); err != nil {
		w.t.Fatalf("start fake model: %v", err)
	}
	w.t.Cleanup(l.Stop)

	deadline := time.Now().Add(budget(10 * time.Second))
	for {
		data, err := os.ReadFile(portFile)
		if err == nil {
			l.Port, err = strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				w.t.Fatalf("fake model port file %q: %v", data, err)
			}
			break
		}
		if time.Now().After(deadline) {
			l.Stop()
			w.t.Fatalf("fake model did not start within %v; stderr:\n%s", budget(10*time.Second), l.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}

	w.WriteJSON(filepath.Join(w.AgentDir, "models.json"), map[string]any{
		"providers": map[string]any{
			"fake": map[string]any{
				"baseUrl": fmt.Sprintf("http://127.0.0.1:%d/v1", l.Port),
				"api":     "openai-completions",
				"apiKey":  "fake-key",
				"compat":  map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
				"models":  []any{map[string]any{"id": "fake-model"}},
			},
		},
	})
	w.LLM = l
	return l
}

// Stop ends the fake model and waits for it. It is safe to call twice.
func (l *FakeLLM) Stop() {
	if l.stopped.Swap(true) {
		return
	}
	l.stdin.Close()
	if l.cmd.Process != nil {
		syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
	}
	l.cmd.Wait()
}

// LLMRequest is one request the fake model received.
type LLMRequest struct {
	N      int            `json:"n"`
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Body   map[string]any `json:"body"`
}

// Requests returns every request received so far, in order.
func (l *FakeLLM) Requests() []LLMRequest {
	data, err := os.ReadFile(l.LogFile)
	if err != nil {
		return nil
	}
	var out []LLMRequest
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var r LLMRequest
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// ToolNames are the names of the tools the request offered the model.
func (r LLMRequest) ToolNames() []string {
	var out []string
	tools, _ := r.Body["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		fn, _ := tm["function"].(map[string]any)
		if name, ok := fn["name"].(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// ToolMessages are the texts of the tool results the request carried.
func (r LLMRequest) ToolMessages() []string {
	var out []string
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == "tool" {
			out = append(out, contentText(mm["content"]))
		}
	}
	return out
}

// contentText flattens a message content (a string or a list of parts).
func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}
