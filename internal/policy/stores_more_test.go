package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moreStores are secret stores the base list missed until 2026-12-07, one
// file of each as its tool writes it: a token, a password or a private
// key that Pi's read tool read for the model and the agent's commands
// read in the sandbox.
var moreStores = []string{
	".oci/oci_api_key.pem", ".oci/config", ".config/doctl/config.yaml", ".config/hcloud/cli.toml",
	".config/scw/config.yaml", ".config/openstack/clouds.yaml", ".aliyun/config.json", ".ibmcloud/config.json",
	".fly/config.yml", ".databrickscfg", ".snowsql/config", ".config/linode-cli", ".pulumi/credentials.json",
	".config/configstore/firebase-tools.json", ".netlify/config.json", ".config/netlify/config.json",
	".local/share/com.vercel.cli/auth.json", ".wrangler/config/default.toml", ".config/.wrangler/config/default.toml",
	".cloudflared/cert.pem", ".cloudflared/0a1b.json", ".config/stripe/config.toml", ".supabase/access-token",
	".railway/config.json", ".config/ngrok/ngrok.yml", ".ngrok2/ngrok.yml", ".sentryclirc",
	".config/helm/repositories.yaml", ".config/helm/registry/config.json", ".config/composer/auth.json",
	".composer/auth.json", ".bundle/config", ".ivy2/.credentials", ".sbt/.credentials",
	".gitcookies", ".subversion/auth/svn.simple/0a1b", ".config/tea/config.yml",
	".docker/key.pem", ".docker/cert.pem", ".docker/ca.pem", ".docker/machine/certs/key.pem",
	".docker/contexts/tls/0a1b/docker/key.pem", ".minikube/profiles/minikube/client.key", ".minikube/ca.key",
	".minikube/proxy-client-ca.key", ".codex/auth.json", ".huggingface/token", ".cache/huggingface/token",
	".cache/huggingface/stored_tokens", ".kaggle/kaggle.json", ".config/kaggle/kaggle.json",
	".mcp-auth/mcp-remote-0.1.18/0a1b_tokens.json", ".config/op/config", ".config/Bitwarden CLI/data.json",
	".local/share/kwalletd/kdewallet.kwl", ".local/share/atuin/history.db", ".dbshell",
}

// besideMoreStores are files beside those stores that hold no secret and
// stay readable: the model caches, packages and build state the same tools
// keep. NuGet's user NuGet.Config is among them: dotnet writes it at its
// first run with nuget.org alone, and hidden (an empty file, or one that
// cannot be read) it fails every restore in the sandbox; a password put
// there is the person's to add to their policy.
var besideMoreStores = []string{
	".cache/huggingface/hub/models--x/config.json", ".minikube/cache/iso/minikube.iso", ".docker/buildx/instances/x",
	".nuget/packages/x/1.0.0/x.nuspec", ".nuget/NuGet/NuGet.Config", ".config/composer/composer.json", ".config/helm/plugins/x/plugin.yaml",
	".cache/pip/http/x",
}

// TestMoreSecretStores: every tool is refused each of them, reading as
// writing, and the sandbox's list of stores holds each (or its folder);
// what lies beside them stays readable and off that list.
func TestMoreSecretStores(t *testing.T) {
	t.Parallel()
	checkStores(t, moreStores, besideMoreStores)
}

// codingToolStores are stores the list above still missed: opencode's
// provider keys (auth.json) and its MCP servers' OAuth tokens
// (mcp-auth.json), and Teleport's tsh keys and certificates.
var codingToolStores = []string{
	".local/share/opencode/auth.json", ".local/share/opencode/mcp-auth.json",
	".tsh/keys/proxy.example.com/alice", ".tsh/keys/proxy.example.com/alice-ssh/root-cert.pub",
}

// besideCodingToolStores are opencode's sessions and logs: no secret.
var besideCodingToolStores = []string{
	".local/share/opencode/storage/session/x.json", ".local/share/opencode/log/x.log",
}

// TestCodingToolStores: the same for them.
func TestCodingToolStores(t *testing.T) {
	t.Parallel()
	checkStores(t, codingToolStores, besideCodingToolStores)
}

// checkStores: every tool is refused each of stores, reading as writing,
// and the sandbox's list of stores holds each (or its folder); beside
// stays readable and off that list.
func checkStores(t *testing.T, moreStores, besideMoreStores []string) {
	t.Helper()
	p := mustMerge(t, "", "")
	for _, rel := range moreStores {
		path := "~/" + rel
		for _, c := range []Call{
			call("read", "path", path),
			call("grep", "pattern", "token", "path", path),
			call("write", "path", path, "content", "x"),
			call("bash", "command", "cd ~ && cat '"+rel+"'"),
			call("bash", "command", "cat ~/'"+rel+"'"),
		} {
			if d := p.Decide(c, testFacts()); d.Action != ActionBlock {
				t.Errorf("%s %v: %s %s, want a block", c.ToolName, c.Input, d.Action, d.Code)
			}
		}
	}
	for _, rel := range besideMoreStores {
		if d := p.Decide(call("read", "path", "~/"+rel), testFacts()); d.Action != ActionAllow {
			t.Errorf("read ~/%s: %s %s (%s), want an allow", rel, d.Action, d.Code, d.Reason)
		}
	}
	home, proj := t.TempDir(), t.TempDir()
	for _, rel := range append(slices.Clone(moreStores), besideMoreStores...) {
		f := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := LoadSettings(home, proj)
	stores, _ := s.SecretStores(home)
	hidden := func(f string) bool {
		return slices.ContainsFunc(stores, func(st string) bool { return st == f || strings.HasPrefix(f, st+"/") })
	}
	for _, rel := range moreStores {
		if !hidden(filepath.Join(home, rel)) {
			t.Errorf("~/%s is not among the sandbox's stores: %v", rel, stores)
		}
	}
	for _, rel := range besideMoreStores {
		if hidden(filepath.Join(home, rel)) {
			t.Errorf("~/%s is among the sandbox's stores", rel)
		}
	}
}
