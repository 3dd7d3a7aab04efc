package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentMoreSecretStoresHidden: the stores the base policy added on
// 2026-12-07 (the policy package's testdata/more-stores.txt, the list its
// TestMoreSecretStores holds the guard to) each hold a secret of their
// own; unconfined, one script reads them all; the agent's command, a
// server's and a command under Landlock alone read none of them, while
// what lies beside them (testdata/beside-stores.txt) stays readable.
func TestAgentMoreSecretStoresHidden(t *testing.T) {
	needNamespaces(t)
	storesHidden(t, storeList(t, "more-stores.txt"), storeList(t, "beside-stores.txt"))
}

// storeList reads a list of the policy package's testdata: one path a
// line beneath the home, "#" comments.
func storeList(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "policy", "testdata", name))
	must(t, err)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// storesHidden plants a secret of its own in each of stores beneath the
// home and checks that an unconfined script reads them all and the agent's
// command, a server's and a command under Landlock alone read none, and
// every file of beside.
func storesHidden(t *testing.T, stores, beside []string) {
	t.Helper()
	w := newWorld(t)
	var secrets, readable []string
	for i, rel := range stores {
		s := fmt.Sprintf("MORE-SECRET-%02d", i)
		secrets = append(secrets, s)
		write(t, filepath.Join(w.home, rel), s+"\n")
	}
	for i, rel := range beside {
		s := fmt.Sprintf("READABLE-%02d", i)
		readable = append(readable, s)
		write(t, filepath.Join(w.home, rel), s+"\n")
	}
	// python reads each by its name, and a glob of the home and of
	// ~/.config finds what a name list would miss
	script := `python3 -c "
import os
h=os.environ['HOME']
for p in ` + pyList(stores) + `:
    try: print(open(os.path.join(h,p)).read())
    except Exception as e: print('refused', p, type(e).__name__)
"
cat ~/.[a-z]*/* ~/.config/*/* ~/.config/*/*/* ~/.local/share/*/* ~/.[a-z]*/*/*/* 2>/dev/null
for p in ` + strings.Join(beside, " ") + `; do cat ~/"$p"; done
echo done`
	control := exec.Command("/bin/bash", "-c", script)
	control.Dir, control.Env = w.proj, w.env
	if out, err := control.CombinedOutput(); err != nil || !containsAll(string(out), secrets) {
		t.Fatalf("control: unconfined, the script reads every store (%v):\n%s", err, out)
	}
	for _, run := range []struct {
		who string
		run func(*testing.T, string) (string, error)
	}{{"the agent's command", w.run}, {"a server", w.runServer}, {"a command under Landlock alone", func(t *testing.T, script string) (string, error) {
		// no mount hides them: Landlock's rules alone (the fault build)
		cmd := exec.Command(faultBin, "sandbox", "exec", "--", "/bin/bash", "-c", script)
		cmd.Dir, cmd.Env = w.proj, append(w.env, "PIAGENT_SANDBOX_FAULT=mount")
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), "Landlock and seccomp alone") {
			t.Fatalf("not run under Landlock alone:\n%s", out)
		}
		return string(out), err
	}}} {
		out, err := run.run(t, script)
		if err != nil || !strings.Contains(out, "done") || !containsAll(out, readable) {
			t.Fatalf("%s: err %v, output %q", run.who, err, out)
		}
		for i, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s read ~/%s", run.who, stores[i])
			}
		}
	}
}

// pyList is a Python list literal of the strings (none holds a quote).
func pyList(ss []string) string {
	return "['" + strings.Join(ss, "','") + "']"
}
