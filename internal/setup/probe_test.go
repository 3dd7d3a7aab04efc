package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeMachine answers queries from a table: argv joined by spaces → stdout
// (an absent entry fails), and programs on PATH.
type fakeMachine struct {
	out    map[string]string
	onPath map[string]string
	heads  map[string]string
	locked map[string]bool
}

func (f fakeMachine) machine() Machine {
	return Machine{
		Output: func(argv ...string) (string, error) {
			if o, ok := f.out[strings.Join(argv, " ")]; ok {
				return o, nil
			}
			return "", errors.New("exit status 1")
		},
		LookPath: func(name string) string { return f.onPath[name] },
		ReadHead: func(p string, n int) ([]byte, error) {
			if h, ok := f.heads[p]; ok {
				return []byte(h), nil
			}
			return nil, errors.New("no such file")
		},
		Writable: func(dir string) error {
			if f.locked[dir] {
				return errors.New("permission denied")
			}
			return nil
		},
	}
}

// TestProbePi: the Node Pi runs with is found from its shebang, and each
// version is checked, with no Pi, Node or npm on this machine.
func TestProbePi(t *testing.T) {
	envNode := "#!/usr/bin/env node\n"
	for _, tc := range []struct {
		name     string
		m        fakeMachine
		piVer    string
		node     string // "path version via", or ""
		problems string
	}{
		{"node from PATH, both new enough",
			fakeMachine{heads: map[string]string{"/pi": envNode}, onPath: map[string]string{"node": "/n/node"},
				out: map[string]string{"/n/node --version": "v22.19.1\n", "/pi --version": "1.6.0\n"}},
			"1.6.0", "/n/node 22.19.1 PATH", ""},
		{"node named by the shebang",
			fakeMachine{heads: map[string]string{"/pi": "#!/opt/node/bin/node\n"},
				out: map[string]string{"/opt/node/bin/node --version": "v22.19.1", "/pi --version": "0.86.1"}},
			"0.86.1", "/opt/node/bin/node 22.19.1 shebang", ""},
		{"node missing",
			fakeMachine{heads: map[string]string{"/pi": envNode}, out: map[string]string{}},
			"", "", "node-missing"},
		{"node too old, and Pi fails because of it",
			fakeMachine{heads: map[string]string{"/pi": envNode}, onPath: map[string]string{"node": "/n/node"},
				out: map[string]string{"/n/node --version": "v16.0.0"}},
			"", "/n/node 16.0.0 PATH", "node-old"},
		{"Pi too old",
			fakeMachine{heads: map[string]string{"/pi": "\x7fELF"}, out: map[string]string{"/pi --version": "0.40.0"}},
			"0.40.0", "", "pi-old"},
		{"Pi does not start",
			fakeMachine{heads: map[string]string{"/pi": "\x7fELF"}, out: map[string]string{}},
			"", "", "pi-version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi, node, probs := ProbePi(tc.m.machine(), Tool{Path: "/pi", Via: "PATH"})
			if pi.Version != tc.piVer {
				t.Errorf("pi version %q, want %q", pi.Version, tc.piVer)
			}
			got := ""
			if node != nil {
				got = node.Path + " " + node.Version + " " + node.Via
			}
			if got != tc.node {
				t.Errorf("node %q, want %q", got, tc.node)
			}
			var codes []string
			for _, p := range probs {
				codes = append(codes, p.Code)
			}
			if strings.Join(codes, " ") != tc.problems {
				t.Errorf("problems %v, want %q", probs, tc.problems)
			}
		})
	}
}

func TestNPMAndPiagentProblems(t *testing.T) {
	dir := t.TempDir()
	m := fakeMachine{onPath: map[string]string{}, locked: map[string]bool{dir: true},
		out: map[string]string{"/bin/piagent version": "piagent 0.9.0\n"}}
	var codes []string
	for _, p := range NPMProblems(m.machine(), dir+"/agent", "PI_CODING_AGENT_DIR") {
		codes = append(codes, p.Code)
		if p.Code == "npm-root" && !strings.Contains(p.Fix, "PI_CODING_AGENT_DIR") {
			t.Errorf("fix does not name the variable: %s", p.Fix)
		}
	}
	if strings.Join(codes, " ") != "npm-missing npm-root" {
		t.Errorf("npm problems %v", codes)
	}
	m.onPath["npm"], m.locked = "/bin/npm", nil
	if p := NPMProblems(m.machine(), dir+"/agent", "X"); len(p) != 0 {
		t.Errorf("npm present, folder writable: %v", p)
	}
	tool := &Tool{Path: "/bin/piagent"}
	if p := PiagentProblem(m.machine(), tool, "0.9.0"); len(p) != 0 || tool.Version != "0.9.0" {
		t.Errorf("matching piagent: %v %+v", p, tool)
	}
	if p := PiagentProblem(m.machine(), &Tool{Path: "/bin/piagent"}, "1.0.0"); len(p) != 1 || p[0].Code != "piagent-version" {
		t.Errorf("other version: %v", p)
	}
	if p := PiagentProblem(m.machine(), nil, "1.0.0"); p != nil {
		t.Errorf("no binary: %v", p)
	}
}

// TestProbePiReadsTheLaunchersVersion: setup reads Pi's version by the
// launcher's rule (pihost.ReadVersion): a Pi in its npm package is the
// version its package.json says, whatever --version prints.
func TestProbePiReadsTheLaunchersVersion(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@earendil-works", "pi-coding-agent")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@earendil-works/pi-coding-agent","version":"1.6.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(pkg, "cli.js")
	if err := os.WriteFile(cli, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := fakeMachine{heads: map[string]string{cli: "\x7fELF"}, out: map[string]string{cli + " --version": "warning: something\n"}}
	pi, _, probs := ProbePi(m.machine(), Tool{Path: cli, Via: "PIAGENT_PI"})
	if pi.Version != "1.6.0" || len(probs) != 0 {
		t.Errorf("version %q, problems %v; want 1.6.0 and none", pi.Version, probs)
	}
}
