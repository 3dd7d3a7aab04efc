package sandbox_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moreStores are the secret stores added to the base policy on
// 2026-12-07, one file of each as its tool writes it (the policy
// package's TestMoreSecretStores holds the guard to the same list).
var moreStores = []string{
	".oci/oci_api_key.pem", ".config/doctl/config.yaml", ".config/hcloud/cli.toml", ".config/scw/config.yaml",
	".config/openstack/clouds.yaml", ".aliyun/config.json", ".ibmcloud/config.json", ".fly/config.yml",
	".databrickscfg", ".snowsql/config", ".config/linode-cli", ".pulumi/credentials.json",
	".config/configstore/firebase-tools.json", ".netlify/config.json", ".config/netlify/config.json",
	".local/share/com.vercel.cli/auth.json", ".wrangler/config/default.toml", ".config/.wrangler/config/default.toml",
	".cloudflared/cert.pem", ".config/stripe/config.toml", ".supabase/access-token", ".railway/config.json",
	".config/ngrok/ngrok.yml", ".ngrok2/ngrok.yml", ".sentryclirc", ".config/helm/repositories.yaml",
	".config/helm/registry/config.json", ".config/composer/auth.json", ".composer/auth.json",
	".bundle/config", ".ivy2/.credentials", ".sbt/.credentials", ".gitcookies",
	".subversion/auth/svn.simple/0a1b", ".config/tea/config.yml", ".docker/key.pem", ".docker/machine/certs/key.pem",
	".docker/contexts/tls/0a1b/docker/key.pem", ".minikube/profiles/minikube/client.key", ".minikube/ca.key",
	".codex/auth.json", ".huggingface/token", ".cache/huggingface/token", ".cache/huggingface/stored_tokens",
	".kaggle/kaggle.json", ".config/kaggle/kaggle.json", ".mcp-auth/mcp-remote-0.1.18/0a1b_tokens.json",
	".config/op/config", ".config/Bitwarden CLI/data.json", ".local/share/kwalletd/kdewallet.kwl",
	".local/share/atuin/history.db", ".dbshell",
}

// TestAgentMoreSecretStoresHidden: each store holds a secret of its own;
// unconfined, one script reads them all; the agent's command and an
// server's, confined, read none of them, with namespaces or under
// Landlock alone, while the model cache and the packages beside them stay
// readable.
func TestAgentMoreSecretStoresHidden(t *testing.T) {
	needNamespaces(t)
	storesHidden(t, moreStores)
}

// codingToolStores are stores the 2026-12-07 list still missed: opencode's
// provider keys and its MCP servers' OAuth tokens, and Teleport's tsh keys
// and certificates (the policy package's TestCodingToolStores holds the
// guard to the same list).
var codingToolStores = []string{
	".local/share/opencode/auth.json", ".local/share/opencode/mcp-auth.json",
	".tsh/keys/proxy.example.com/alice", ".tsh/keys/proxy.example.com/alice-ssh/root-cert.pub",
}

// TestAgentCodingToolStoresHidden: the same for them.
func TestAgentCodingToolStoresHidden(t *testing.T) {
	needNamespaces(t)
	storesHidden(t, codingToolStores)
}

// storesHidden plants a secret of its own in each of stores beneath the
// home and checks that an unconfined script reads them all and the agent's
// command, a server's and a command under Landlock alone read none.
func storesHidden(t *testing.T, stores []string) {
	t.Helper()
	w := newWorld(t)
	var secrets []string
	for i, rel := range stores {
		s := fmt.Sprintf("MORE-SECRET-%02d", i)
		secrets = append(secrets, s)
		write(t, filepath.Join(w.home, rel), s+"\n")
	}
	write(t, filepath.Join(w.home, ".cache", "huggingface", "hub", "models--x", "config.json"), "READABLE-MODEL\n")
	write(t, filepath.Join(w.home, ".nuget", "packages", "x", "x.nuspec"), "READABLE-PACKAGE\n")
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
cat ~/.cache/huggingface/hub/models--x/config.json ~/.nuget/packages/x/x.nuspec
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
		if err != nil || !strings.Contains(out, "done") || !strings.Contains(out, "READABLE-MODEL") || !strings.Contains(out, "READABLE-PACKAGE") {
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
