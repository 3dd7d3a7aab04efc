package e2e

import (
	"os"
	"strings"
	"testing"
)

// The model's bash call runs under `piagent sandbox exec`: a python3 -c
// that writes the approval store (no command reader sees a path in it)
// leaves the store unchanged and its output shows the refusal, while a
// benign write in the project works.
func TestSandboxedBashInPi(t *testing.T) {
	t.Parallel()
	w, bins := guardWorld(t)
	store := w.HomeFile(".pi/piagent-mcp-approvals.json")
	attack := `python3 -c "import os;p=os.path.join(os.environ['HOME'],'.'+'pi','pia'+'gent-mcp-appro'+'vals.json');open(p,'w').write('{}')"`
	w.StartLLM(
		Call("bash", map[string]any{"command": attack}),
		Call("bash", map[string]any{"command": "echo built > out.txt && cat out.txt"}),
	)
	path := deps.nodeBin + string(os.PathListSeparator) + os.Getenv("PATH")
	r := w.RunPi(guarded(bins, PiOptions{Prompt: "Do it", Env: map[string]string{"PATH": path}}))
	requireExit0(t, r)
	trs := r.ToolResults()
	if len(trs) != 2 {
		t.Fatalf("tool results: %+v\n%s", trs, r.Describe())
	}
	// The error line names the store, which redaction removes from what the
	// model sees; the traceback and the exit status remain.
	if !trs[0].IsError || !strings.Contains(trs[0].Text, "Traceback") || !strings.Contains(trs[0].Text, "exited with code 1") {
		t.Errorf("the store write was not refused by the sandbox: %+v", trs[0])
	}
	if data := w.Read(store); data != "" {
		t.Errorf("the approval store was written: %q", data)
	}
	if trs[1].IsError || !strings.Contains(trs[1].Text, "built") {
		t.Errorf("a benign command failed under the sandbox: %+v", trs[1])
	}
	if got := w.Read(w.ProjectFile("out.txt")); strings.TrimSpace(got) != "built" {
		t.Errorf("out.txt = %q", got)
	}
	requireNoStarts(t, w)
}
