package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentSecretStoresRewritten: a store that a person's tool rewrites
// (a temporary file renamed over it: bash's history at a shell's exit, gh's
// and kubectl's configuration) or creates while a confined command runs is
// not read by that command.
func TestAgentSecretStoresRewritten(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".git-credentials"), "https://u:OLD@example.com\n")
	write(t, filepath.Join(w.home, ".aws", "config"), "[default]\nregion=x\n")
	write(t, filepath.Join(w.home, ".gitconfig"), "[alias]\n\tst = READABLE-GITCONFIG\n")
	// folders the policy opens in part, with no unreadable file yet
	write(t, filepath.Join(w.home, ".config", "git", "config"), "[user]\n\tname = READABLE-GIT-CONFIG\n")
	write(t, filepath.Join(w.home, ".config", "fish", "config.fish"), "# READABLE-FISH-CONFIG\n")
	goFile := filepath.Join(w.proj, "go")
	cmd := exec.Command(leanBin, "exec", "--keep-env", testVars, "--", "/bin/bash", "-c",
		`touch ready; for i in $(seq 600); do [ -e go ] && break; sleep 0.05; done; cat ~/.git-credentials ~/.aws/credentials ~/.bash_history ~/.kube/config ~/.config/gh/hosts.yml ~/.config/git/credentials ~/.config/fish/fish_variables; cat ~/.gitconfig ~/.config/git/config ~/.config/fish/config.fish; echo done`)
	cmd.Dir, cmd.Env = w.proj, w.env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	// the command runs: the sandbox is applied
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(w.proj, "ready")); err == nil {
			break
		}
		if i == 600 {
			cmd.Process.Kill()
			t.Fatalf("the confined command did not start in 30 s: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tmp := filepath.Join(w.home, ".git-credentials.tmp")
	write(t, tmp, "https://u:RENAMED-SECRET@example.com\n")
	must(t, os.Rename(tmp, filepath.Join(w.home, ".git-credentials")))
	write(t, filepath.Join(w.home, ".aws", "credentials"), "[default]\naws_secret_access_key=NEW-AWS-SECRET\n")
	write(t, filepath.Join(w.home, ".bash_history"), "export TOKEN=NEW-HIST-SECRET\n")
	write(t, filepath.Join(w.home, ".kube", "config"), "users:\n- user: {token: NEW-KUBE-SECRET}\n")
	write(t, filepath.Join(w.home, ".config", "gh", "hosts.yml"), "github.com:\n  oauth_token: NEW-GH-SECRET\n")
	write(t, filepath.Join(w.home, ".config", "git", "credentials"), "https://u:NEW-GIT-SECRET@example.com\n")
	write(t, filepath.Join(w.home, ".config", "fish", "fish_variables"), "SETUVAR OPENAI_API_KEY:NEW-FISH-SECRET\n")
	write(t, goFile, "")
	err := cmd.Wait()
	if !strings.Contains(out.String(), "done") || !containsAll(out.String(), []string{"READABLE-GITCONFIG", "READABLE-GIT-CONFIG", "READABLE-FISH-CONFIG"}) {
		t.Fatalf("err %v, output %q", err, out.String())
	}
	for _, s := range []string{"RENAMED-SECRET", "NEW-AWS-SECRET", "NEW-HIST-SECRET", "NEW-KUBE-SECRET", "NEW-GH-SECRET", "NEW-GIT-SECRET", "NEW-FISH-SECRET"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("the agent's command read %s:\n%s", s, out.String())
		}
	}
}

// TestSecretStoresUnderLandlockAlone: where no namespace can be made (an
// ordinary user without user namespaces; here the fault build), no mount
// hides a store, and Landlock's rules alone keep the stores and Pi's
// auth.json unread, as sandbox status says; a file beside them is read
// (the control).
func TestSecretStoresUnderLandlockAlone(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".git-credentials"), "https://u:LL-GIT-SECRET@example.com\n")
	write(t, filepath.Join(w.home, ".config", "gh", "hosts.yml"), "github.com:\n  oauth_token: LL-GH-SECRET\n")
	write(t, filepath.Join(w.home, ".gitconfig"), "[alias]\n\tst = LL-READABLE\n")
	env := append(w.env, "PIAGENT_SANDBOX_FAULT=mount")
	cmd := exec.Command(faultBin, "sandbox", "exec", "--", "/bin/bash", "-c",
		`cat ~/.ssh/id_ed25519 ~/.git-credentials ~/.config/gh/hosts.yml ~/.pi/agent/auth.json; cat ~/.gitconfig; echo done`)
	cmd.Dir, cmd.Env = w.proj, env
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "Landlock and seccomp alone") || !strings.Contains(string(out), "LL-READABLE") || !strings.Contains(string(out), "done") {
		t.Fatalf("not run under Landlock alone, or the control unread:\n%s", out)
	}
	for _, s := range []string{"PRIVATE KEY", "LL-GIT-SECRET", "LL-GH-SECRET", "sk-ant"} {
		if strings.Contains(string(out), s) {
			t.Errorf("read %s under Landlock alone:\n%s", s, out)
		}
	}
	st := exec.Command(faultBin, "sandbox", "status", "--json")
	st.Dir, st.Env = w.proj, env
	if o, err := st.Output(); err != nil || !strings.Contains(string(o), `"storesUnreadable": true`) {
		t.Errorf("sandbox status: %v\n%s", err, o)
	}
}
