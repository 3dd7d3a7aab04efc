package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/preset"
)

// Issue 20: the preset servers that the npm registry can give us here start
// under the server profile and answer: context7 (npx) lists its tools and
// answers a call (the answer may carry its upstream's network error; it is
// still the server answering). chrome-devtools and playwright need a browser
// this machine does not have, and github runs through docker, which is not
// confined (doctor says so): those are not tried.
func TestPresetUnderServerSandbox(t *testing.T) {
	t.Parallel()
	bins := Binaries(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx is not on PATH")
	}
	base, ok := preset.Baseline("context7")
	if !ok {
		t.Fatal("no context7 baseline")
	}
	// A fixed project folder: the server's private npm cache (keyed by the
	// project) then survives between runs, and npx downloads once.
	project := filepath.Join(os.TempDir(), fmt.Sprintf("piagent-e2e-context7-%d", os.Getuid()))
	os.MkdirAll(project, 0o755)
	args := []string{"sandbox", "exec", "--profile", "server", "--server", "context7", "--project", project, "--", npx}
	for _, a := range base.Entry["args"].([]any) {
		args = append(args, a.(string))
	}
	// The first start may download the package from the npm registry; a
	// start that ends before answering is tried once more.
	var last string
	for try := 0; try < 2; try++ {
		if last = tryPreset(t, bins, args); last == "" {
			return
		}
		t.Logf("try %d: %s", try+1, last)
	}
	t.Fatal(last)
}

// tryPreset starts the server and asks it; "" when it answered, else why not.
func tryPreset(t *testing.T, bins Bins, args []string) (failure string) {
	cmd := exec.Command(bins.Piagent, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // npx starts node: end them together
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	type ended string
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(ended)
			if !ok {
				panic(r)
			}
			failure = string(e)
		}
	}()
	lines := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	send := func(m map[string]any) {
		m["jsonrpc"] = "2.0"
		b, _ := json.Marshal(m)
		stdin.Write(append(b, '\n'))
	}
	wait := func(id float64) map[string]any {
		deadline := time.After(budget(120 * time.Second))
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					panic(ended("the server ended before answering; stderr: " + stderr.String()))
				}
				if m["id"] == id {
					return m
				}
			case <-deadline:
				t.Fatalf("no answer to %v within 120s\nstderr: %s", id, stderr.String())
			}
		}
	}
	send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "piagent-e2e", "version": "1"}}})
	wait(1)
	send(map[string]any{"method": "notifications/initialized"})
	send(map[string]any{"id": 2, "method": "tools/list"})
	list := wait(2)
	if !strings.Contains(mustJSON(list), "resolve-library-id") {
		t.Fatalf("tools/list: %v", list)
	}
	send(map[string]any{"id": 3, "method": "tools/call", "params": map[string]any{"name": "resolve-library-id", "arguments": map[string]any{"libraryName": "react", "query": "hooks"}}})
	call := wait(3)
	if call["result"] == nil {
		t.Fatalf("the tool call got no result: %v", call)
	}
	t.Logf("context7 under the server profile answered tools/list and a call: %.200s", mustJSON(call["result"]))
	return ""
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
