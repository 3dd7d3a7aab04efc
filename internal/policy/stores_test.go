package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/paths"
)

// TestSecretStores: the stores a sandbox hides are the home's and the
// root's protected paths that no readable pattern opens, a partly
// readable folder's unreadable contents alone; the user's file removes
// and opens, a repository's only adds; LoadSettings and Load agree.
func TestSecretStores(t *testing.T) {
	for _, tc := range []struct {
		name, user, proj string
		files            []string // made beneath home
		in, out          []string // relative to home ("/…" absolute)
	}{{
		name:  "base",
		files: []string{".config/git/config", ".config/git/credentials", ".config/git/hooks/pre-commit", ".config/fish/fish_variables", ".config/fish/config.fish", ".config/fish/functions/f.fish"},
		in: []string{".ssh", ".aws/credentials", ".aws/login/cache", ".git-credentials", ".kube", ".docker/config.json", ".config/gh", ".npmrc", ".netrc",
			".gnupg", ".bash_history", ".claude/.credentials.json", ".mozilla", "/etc/shadow",
			".config/git/credentials", ".config/fish/fish_variables",
			".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi", ".config/opera", ".thunderbird", ".config/containers/auth.json"},
		out: []string{".bashrc", ".gitconfig", ".aws/config", ".aws", ".config/git", ".config/git/config", ".config/git/hooks",
			".config/fish", ".config/fish/config.fish", ".config/fish/functions", ".kube/config", ".config/gh/hosts.yml",
			".local/bin", ".cargo/config.toml"},
	}, {
		name:  "the user removes one and opens a file of another",
		user:  `{"version":1,"remove":{"protectedPaths":["~/.kube/**","~/.kube/config"]},"allowReadPaths":["~/.ssh/config","~/.ssh/known_hosts"]}`,
		files: []string{".ssh/config", ".ssh/known_hosts", ".ssh/id_ed25519", ".ssh/keys/a"},
		in:    []string{".ssh/id_ed25519", ".ssh/keys"},
		out:   []string{".kube", ".ssh", ".ssh/config", ".ssh/known_hosts"},
	}, {
		name: "the user adds a store, and makes a whole one readable",
		user: `{"version":1,"protectedPaths":["~/.work-secrets/**","~/.tokens/*.txt"],"allowReadPaths":["~/.gnupg/**"]}`,
		in:   []string{".work-secrets", ".ssh"},
		out:  []string{".gnupg", ".tokens"},
	}, {
		name: "a repository adds, and cannot remove or open",
		proj: `{"version":1,"protectedPaths":["~/.repo-named/**"],"remove":{"protectedPaths":["~/.ssh/**"]},"allowReadPaths":["~/.aws/credentials"]}`,
		in:   []string{".repo-named", ".ssh", ".aws/credentials"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			home, proj := t.TempDir(), t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(home, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			writePolicies(t, home, proj, tc.user, tc.proj)
			light, _ := LoadSettings(home, proj)
			full, _ := Load(home, proj)
			got, _ := light.SecretStores(home)
			if f, _ := full.SecretStores(home); !slices.Equal(sorted(f), sorted(got)) {
				t.Errorf("Load's stores differ from LoadSettings's:\n%v\n%v", f, got)
			}
			abs := func(rel string) string {
				if strings.HasPrefix(rel, "/") {
					return rel
				}
				return filepath.Join(home, rel)
			}
			for _, rel := range tc.in {
				if !slices.Contains(got, abs(rel)) {
					t.Errorf("%s is not among the stores: %v", rel, got)
				}
			}
			for _, rel := range tc.out {
				if slices.Contains(got, abs(rel)) {
					t.Errorf("%s is among the stores", rel)
				}
			}
			for _, s := range got {
				if !filepath.IsAbs(s) || filepath.Clean(s) != s || strings.ContainsAny(s, "*?[{") {
					t.Errorf("%q: not a clean absolute path", s)
				}
			}
		})
	}
}

// TestSecretStoresNoHome: with no home, only the root's stores.
func TestSecretStoresNoHome(t *testing.T) {
	p, _ := LoadSettings("", "")
	got, _ := p.SecretStores("")
	if !slices.Equal(got, []string{"/etc/shadow"}) {
		t.Fatalf("stores without a home: %v", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestPartlyReadable: the folders the policy opens in part are named
// whether or not they hold an unreadable file yet, for the sandbox to
// keep a file that appears in them later unread.
func TestPartlyReadable(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{".config/git/config", ".config/fish/config.fish"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := LoadSettings(home, t.TempDir())
	stores, got := p.SecretStores(home)
	for _, want := range []string{".config/git", ".config/fish"} {
		if !slices.Contains(got, filepath.Join(home, want)) {
			t.Errorf("PartlyReadable %v: no %s", got, want)
		}
	}
	if slices.Contains(got, filepath.Join(home, ".ssh")) || slices.ContainsFunc(stores, func(s string) bool { return paths.Within(filepath.Join(home, ".config", "git"), s) }) {
		t.Errorf("partly readable %v, stores %v", got, stores)
	}
}
