package setup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/piagent/piagent/internal/pihost"
)

// Tool is a program setup found: where it is, its version, and how it was
// found.
type Tool struct {
	Path    string `json:"path"`
	Version string `json:"version,omitempty"`
	Via     string `json:"via,omitempty"` // PIAGENT_PI, PIAGENT_BIN, PATH, shebang
}

// Machine is what probing asks of the machine, injected so that it can be
// tried without Pi, Node or npm: setup's command passes the real thing
// (RealMachine), tests a fake.
type Machine struct {
	// Output runs a short query (a program's --version) and returns its
	// stdout, or its stderr when stdout is empty (Pi 0.74 and older print
	// their version there).
	Output func(argv ...string) (string, error)
	// LookPath finds a program on the person's PATH; "" when it is not there.
	LookPath func(name string) string
	// ReadHead reads up to n bytes from the start of a file.
	ReadHead func(path string, n int) ([]byte, error)
	// Writable reports why a folder cannot be written (nil when it can).
	Writable func(dir string) error
}

// RealMachine is Machine for this process, with output running queries.
func RealMachine(output func(argv ...string) (string, error), lookPath func(string) string) Machine {
	return Machine{Output: output, LookPath: lookPath, ReadHead: readHead, Writable: writable}
}

// ProbePi checks Pi, found at pi.Path, and the Node its script runs with:
// their versions, and what is missing or too old.
func ProbePi(m Machine, pi Tool) (Tool, *Tool, []Problem) {
	var problems []Problem
	var node *Tool
	// The Node that runs Pi: the one its shebang names, when it is a Node script.
	if head, err := m.ReadHead(pi.Path, 512); err == nil {
		if prog, viaEnv, ok := Shebang(head); ok && UsesNode(prog) {
			path, via := prog, "shebang"
			if viaEnv {
				path, via = m.LookPath(prog), "PATH"
			}
			if path == "" {
				problems = append(problems, Problem{Code: "node-missing",
					Reason: fmt.Sprintf("Pi (%s) runs with %s, which is not on PATH", pi.Path, prog),
					Fix:    fmt.Sprintf("install Node %s or later and put it on PATH", MinNode)})
			} else {
				node = &Tool{Path: path, Via: via}
				out, err := m.Output(path, "--version")
				if err != nil {
					problems = append(problems, Problem{Code: "node-version",
						Reason: fmt.Sprintf("%s --version failed: %v", path, err), Fix: "check the Node installation"})
				} else {
					v, prob := CheckNode(out)
					node.Version = v.String()
					if prob != nil {
						problems = append(problems, *prob)
					}
				}
			}
		}
	}
	v, out, err := pihost.ReadVersion(pi.Path, m.Output)
	if err != nil && !errors.Is(err, pihost.ErrVersion) {
		// An old Node makes Pi itself fail; that problem is already named.
		if len(problems) == 0 {
			problems = append(problems, Problem{Code: "pi-version",
				Reason: fmt.Sprintf("%s --version failed: %v", pi.Path, err), Fix: "check that Pi starts: pi --version"})
		}
		return pi, node, problems
	}
	prob := checkPi(v, err, out)
	if prob == nil || prob.Code == "pi-old" {
		pi.Version = v.String()
	}
	if prob != nil {
		if prob.Code == "pi-old" && hasCode(problems, "node-old") {
			// npm installed the newest Pi this old Node accepts: a new
			// Node alone leaves that Pi in place.
			prob.Reason += fmt.Sprintf(" (npm chose it because the Node that ran npm is older than %s)", MinNode)
			prob.Fix = NodeFix()
		}
		problems = append(problems, *prob)
	}
	return pi, node, problems
}

func hasCode(ps []Problem, code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}

// NPMProblems: Pi 0.86 installs a user's npm packages with `npm install
// --prefix <agentDir>/npm`, not into npm's global prefix, so that folder
// (or the nearest that exists) must be writable, and npm must be on PATH.
// agentDirVar names the variable that moves the agent dir, for the fix.
func NPMProblems(m Machine, agentDir, agentDirVar string) []Problem {
	var out []Problem
	if m.LookPath("npm") == "" {
		out = append(out, Problem{Code: "npm-missing",
			Reason: "Pi installs npm packages with npm, which is not on PATH",
			Fix:    "install npm (it ships with Node) and put it on PATH"})
	}
	root := filepath.Join(agentDir, "npm")
	dir := root
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if err := m.Writable(dir); err != nil {
		out = append(out, Problem{Code: "npm-root",
			Reason: fmt.Sprintf("Pi installs npm packages into %s, and %s is not writable: %v", root, dir, err),
			Fix:    fmt.Sprintf("make %s yours (sudo chown -R \"$USER\" %s), or point %s at a folder you own", dir, dir, agentDirVar)})
	}
	return out
}

// PiagentProblem checks the piagent binary the extension will run (found,
// or nil): that it answers `version` with this build's version.
func PiagentProblem(m Machine, tool *Tool, version string) []Problem {
	if tool == nil {
		return nil
	}
	if o, err := m.Output(tool.Path, "version"); err == nil {
		if f := strings.Fields(o); len(f) >= 2 {
			tool.Version = f[1]
		}
	}
	if tool.Version == version {
		return nil
	}
	v := tool.Version
	if v == "" {
		v = "-"
	}
	return []Problem{{Code: "piagent-version",
		Reason: fmt.Sprintf("the extension will run %s, version %s; this extension is %s", tool.Path, v, version),
		Fix:    "put the matching piagent first on PATH (or set PIAGENT_BIN), then run 'piagent setup'"}}
}

func readHead(path string, n int) ([]byte, error) {
	// A program found on PATH: only a regular file is read, opened without
	// blocking, so that a FIFO in its place cannot hang doctor or setup.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:m], nil
}

// writable tries a file in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".piagent-write-test-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
