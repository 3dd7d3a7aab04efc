//go:build linux

package sandbox_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNpm serves one package, tiny-dep 1.0.0, by the npm registry's
// protocol (a packument and its tarball), and returns the lockfile entry
// npm ci installs it from.
func fakeNpm(t *testing.T) (http.Handler, string) {
	var tb bytes.Buffer
	gz := gzip.NewWriter(&tb)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name":"tiny-dep","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = 'tiny';\n",
	} {
		must(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		tw.Write([]byte(body))
	}
	must(t, tw.Close())
	must(t, gz.Close())
	tgz := tb.Bytes()
	sum := sha512.Sum512(tgz)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	tarURL := "https://registry.npmjs.org/tiny-dep/-/tiny-dep-1.0.0.tgz"
	packument := fmt.Sprintf(`{"name":"tiny-dep","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"tiny-dep","version":"1.0.0","dist":{"tarball":%q,"integrity":%q}}}}`, tarURL, integrity)
	lock := fmt.Sprintf(`{"name":"proj","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"proj","version":"1.0.0","dependencies":{"tiny-dep":"1.0.0"}},"node_modules/tiny-dep":{"version":"1.0.0","resolved":%q,"integrity":%q}}}`, tarURL, integrity)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tiny-dep":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(packument))
		case "/tiny-dep/-/tiny-dep-1.0.0.tgz":
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}), lock
}

// fakePyPI serves one wheel, tinypkg 1.0.0, by PyPI's simple index
// (pypi.org) and its files host (files.pythonhosted.org).
func fakePyPI(t *testing.T) http.Handler {
	files := map[string]string{
		"tinypkg/__init__.py":              "HELLO = 'tiny'\n",
		"tinypkg-1.0.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0.0\n",
		"tinypkg-1.0.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: piagent-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	var record strings.Builder
	var wb bytes.Buffer
	zw := zip.NewWriter(&wb)
	for _, name := range []string{"tinypkg/__init__.py", "tinypkg-1.0.0.dist-info/METADATA", "tinypkg-1.0.0.dist-info/WHEEL"} {
		f, _ := zw.Create(name)
		f.Write([]byte(files[name]))
		h := sha256.Sum256([]byte(files[name]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(h[:]), len(files[name]))
	}
	record.WriteString("tinypkg-1.0.0.dist-info/RECORD,,\n")
	f, _ := zw.Create("tinypkg-1.0.0.dist-info/RECORD")
	f.Write([]byte(record.String()))
	must(t, zw.Close())
	whl := wb.Bytes()
	h := sha256.Sum256(whl)
	index := fmt.Sprintf(`<!DOCTYPE html><html><body><a href="https://files.pythonhosted.org/packages/aa/bb/tinypkg-1.0.0-py3-none-any.whl#sha256=%s">tinypkg-1.0.0-py3-none-any.whl</a></body></html>`, hex.EncodeToString(h[:]))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Host == "pypi.org" && (r.URL.Path == "/simple/tinypkg/" || r.URL.Path == "/simple/tinypkg"):
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(index))
		case r.Host == "files.pythonhosted.org" && r.URL.Path == "/packages/aa/bb/tinypkg-1.0.0-py3-none-any.whl":
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	})
}

// fakeGitHub serves the bare repository piagent/tiny.git by git's smart
// HTTP protocol (git http-backend behind a CGI handler).
func fakeGitHub(t *testing.T, dir string) (http.Handler, string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	execPath, err := exec.Command(gitBin, "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	work, bare := filepath.Join(dir, "work"), filepath.Join(dir, "repos", "piagent", "tiny.git")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(gitBin, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.test", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(t, os.MkdirAll(work, 0o755))
	git(work, "init", "-q")
	write(t, filepath.Join(work, "README"), "tiny repository\n")
	git(work, "add", "README")
	git(work, "commit", "-q", "-m", "first")
	git(dir, "clone", "-q", "--bare", work, bare)
	return &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "repos"), "GIT_HTTP_EXPORT_ALL=1"}}, "https://github.com/piagent/tiny.git"
}

// TestRegistriesInstalls (issue 44): `npm ci`, `pip install` and `git
// clone` over https succeed by default ("network": "registries") through
// the proxy, with namespaces and under Landlock alone, against local
// fakes of each protocol answering for the real names (registry.npmjs.org;
// pypi.org and files.pythonhosted.org; github.com) with a test CA: the
// fault build's proxy dials the fake for the name, so the test runs
// offline, and the names are the default list's, not granted. The control:
// the same install with the proxy's list not naming the fake (a host
// outside it) is refused.
func TestRegistriesInstalls(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	ca, tlsConf := testCA(t, w.root, "registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "github.com", "elsewhere.test")
	npmHandler, lock := fakeNpm(t)
	pypi := fakePyPI(t)
	type install struct {
		name, script, want string
		// missing names the tool this machine lacks: the subtest skips,
		// saying so
		missing string
		handler http.Handler
		hosts   []string
	}
	var installs []install
	npm := install{name: "npm ci", handler: npmHandler, hosts: []string{"registry.npmjs.org"},
		script: `cd npmproj && rm -rf node_modules && npm ci --no-audit --no-fund --no-update-notifier --fetch-retries=0 2>&1 && node -e 'console.log("required:", require("tiny-dep"))'`,
		want:   "required: tiny"}
	if _, err := exec.LookPath("npm"); err != nil {
		npm.missing = "npm is not installed here: npm ci is not tested"
	}
	write(t, filepath.Join(w.proj, "npmproj", "package.json"), `{"name":"proj","version":"1.0.0","dependencies":{"tiny-dep":"1.0.0"}}`)
	write(t, filepath.Join(w.proj, "npmproj", "package-lock.json"), lock)
	installs = append(installs, npm)
	// The interpreter itself, not a version manager's shim (pyenv's
	// rehashes after an install, in a folder the sandbox keeps read-only).
	pip := install{name: "pip install", handler: pypi, hosts: []string{"pypi.org", "files.pythonhosted.org"}, want: "imported: tiny"}
	if py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil && exec.Command("python3", "-m", "pip", "--version").Run() == nil {
		python := strings.TrimSpace(string(py))
		pip.script = `d=$(mktemp -d) && ` + python + ` -m pip install --disable-pip-version-check --no-cache-dir --no-input --target "$d" tinypkg==1.0.0 2>&1 && PYTHONPATH="$d" ` + python + ` -c 'import tinypkg; print("imported:", tinypkg.HELLO)'`
	} else {
		pip.missing = "python3 -m pip is not installed here: pip install is not tested"
	}
	installs = append(installs, pip)
	git := install{name: "git clone", hosts: []string{"github.com"}, want: "tiny repository"}
	if _, err := exec.LookPath("git"); err == nil {
		var repo string
		git.handler, repo = fakeGitHub(t, filepath.Join(w.root, "git"))
		git.script = `d=$(mktemp -d) && git clone -q ` + repo + ` "$d/tiny" 2>&1 && cat "$d/tiny/README"`
	} else {
		git.missing = "git is not installed here: git clone is not tested"
	}
	installs = append(installs, git)

	for _, in := range installs {
		t.Run(in.name, func(t *testing.T) {
			if in.missing != "" {
				t.Skip(in.missing)
			}
			srv := httptest.NewUnstartedServer(in.handler)
			srv.TLS = tlsConf
			srv.StartTLS()
			defer srv.Close()
			var dial []string
			for _, h := range in.hosts {
				dial = append(dial, h+":443="+srv.Listener.Addr().String())
			}
			for _, c := range registriesCases(w) {
				env := append(append([]string{}, c.env...), "PIAGENT_SANDBOX_DIAL="+strings.Join(dial, ","),
					"NODE_EXTRA_CA_CERTS="+ca, "npm_config_cafile="+ca, "REQUESTS_CA_BUNDLE="+ca, "PIP_CERT="+ca, "GIT_SSL_CAINFO="+ca)
				// npm_config_cafile by name: a machine's npmrc may name its
				// own bundle (this one's does), which NODE_EXTRA_CA_CERTS
				// does not override.
				cmd := exec.Command(faultBin, "sandbox", "exec", "--keep-env", "npm_config_cafile", "--", "/bin/bash", "-c", in.script)
				cmd.Dir, cmd.Env = w.proj, env
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(out), in.want) {
					t.Errorf("%s: %s through the proxy: %v\n%s", c.name, in.name, err, out)
				}
			}
		})
	}
	// The control: the same clone from a host outside the list (answered
	// by the same fake) is refused with the fix, so the fakes are reached
	// because the names are allowed, not because anything is.
	t.Run("git clone from a host outside the list", func(t *testing.T) {
		if git.missing != "" {
			t.Skip(git.missing)
		}
		srv := httptest.NewUnstartedServer(git.handler)
		srv.TLS = tlsConf
		srv.StartTLS()
		defer srv.Close()
		for _, c := range registriesCases(w) {
			env := append(append([]string{}, c.env...), "PIAGENT_SANDBOX_DIAL=elsewhere.test:443="+srv.Listener.Addr().String(), "GIT_SSL_CAINFO="+ca)
			out, err := sandboxed(faultBin, env, w.proj, "/bin/bash", "-c", `d=$(mktemp -d) && git clone -q https://elsewhere.test/piagent/tiny.git "$d/tiny"`).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "403") {
				t.Errorf("%s: control: a clone from a host outside the list: %v\n%s", c.name, err, out)
			}
		}
	})
}
