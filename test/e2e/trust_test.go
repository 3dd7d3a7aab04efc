package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 38: /piagent-mcp disable of a repository server, typed in a
// session that reloads after a change (the launcher's), writes no file in
// the repository: its switch is piagent's own record. trust.json stays as
// it was, and Pi 1.6's own trust manager finds nothing in the project that
// needs its trust. The control writes the same switch into .pi/mcp.json
// (--scope pi-project, what disable did before): Pi 1.6 then counts the
// project as holding trust-requiring resources, so a trust answer, or one
// a parent folder has, admits whatever the repository adds to .pi/ later.
// (The reload itself did not write trust.json here, in RPC mode.)
func TestDisableLeavesTrustAlone(t *testing.T) {
	t.Parallel()
	for _, control := range []bool{false, true} {
		w, bins := guardWorld(t)
		if r := w.Exec(bins.PiagentMCP, "approve", "repo-tools", "--yes"); r.ExitCode != 0 {
			t.Fatalf("approve: %s", r.Describe())
		}
		trust := w.AgentDir + "/trust.json"
		before, _ := os.ReadFile(trust)
		w.StartLLM()
		s := w.StartRPC(guarded(bins, PiOptions{Env: map[string]string{"PIAGENT_LAUNCHER": "1"}}))
		cmd := "/piagent-mcp disable repo-tools"
		if control {
			cmd += " --scope pi-project"
		}
		s.Prompt(cmd)
		s.WaitFor(30*time.Second, "disabled notice", func(e Event) bool {
			msg, _ := e["message"].(string)
			return e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "disabled repo-tools")
		})
		// the reloaded session says what the decision did once more
		s.WaitFor(60*time.Second, "the reloaded session", func(e Event) bool {
			msg, _ := e["message"].(string)
			return e.Type() == "extension_ui_request" && e["method"] == "notify" && strings.Contains(msg, "disabled repo-tools")
		})
		s.Close()
		after, _ := os.ReadFile(trust)
		_, statErr := os.Stat(w.ProjectFile(".pi/mcp.json"))
		trusted := strings.Contains(string(after), w.Project) && !strings.Contains(string(before), w.Project)
		if !control {
			if trusted || string(after) != string(before) {
				t.Errorf("disable changed Pi's trust.json:\nbefore: %s\nafter:  %s", before, after)
			}
			if statErr == nil {
				t.Errorf("disable wrote .pi/mcp.json into the repository")
			}
			if data := w.Read(w.HomeFile(".pi/piagent-mcp-approvals.json")); !strings.Contains(data, `"off": true`) {
				t.Errorf("the switch is not in piagent's record:\n%s", data)
			}
			if deps.pi == "1.6" && trustRequiring(t, w) {
				t.Errorf("after disable, Pi 1.6 finds trust-requiring resources in the project")
			}
			r := w.Exec(bins.PiagentMCP, "list")
			if !strings.Contains(r.Stdout, "disabled") {
				t.Errorf("list after disable:\n%s", r.Stdout)
			}
			continue
		}
		if statErr != nil {
			t.Errorf("control: disable --scope pi-project wrote no .pi/mcp.json")
		}
		if deps.pi == "1.6" && !trustRequiring(t, w) {
			t.Errorf("control: Pi 1.6 does not count the written .pi/mcp.json as needing the project's trust")
		}
		if trusted {
			t.Logf("control on Pi %s: the reload recorded trust: %s", deps.pi, after)
		}
	}
}

// trustRequiring asks Pi 1.6's own trust manager whether the project holds
// resources that need the project's trust (hasTrustRequiringProjectResources):
// with one, Pi's next start asks, and a yes, or a trust a parent folder
// already has, admits the repository's .pi content.
func trustRequiring(t *testing.T, w *World) bool {
	t.Helper()
	mod := filepath.Join(filepath.Dir(filepath.Dir(deps.piCLI)), "core", "trust-manager.js")
	out, err := exec.Command(deps.node, "--input-type=module", "-e",
		fmt.Sprintf("const m = await import(%q); console.log(m.hasTrustRequiringProjectResources(%q))", mod, w.Project)).CombinedOutput()
	if err != nil {
		t.Fatalf("Pi's trust manager: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out)) == "true"
}
