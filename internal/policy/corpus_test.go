package policy_test

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/engine"
	"github.com/piagent/piagent/internal/guard"
)

// The command corpus (testdata/commands.txt) scores the command reader as a
// person meets it: the whole engine the extension asks (gate self-protection
// and the tool policy), in the default mode sourceWrite, in a git project
// with uncommitted work and a .env. Each line is
//
//	tag  expect  command
//
// separated by tabs. The command is a Go string literal when it starts with
// a double quote. expect is danger (caught: block or confirm), daily
// (allowed: allow or warn), or an exact action, block, confirm or allow, for
// the cases an issue names. The tag says where the idea came from: dcg
// (destructive_command_guard's corpora), codex (Codex's command-safety
// vectors), report (public permission-bypass reports), issue (issue 22's
// examples), daily (everyday use).

type corpusCase struct {
	line        int
	tag, expect string
	command     string
}

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "commands.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []corpusCase
	sc := bufio.NewScanner(f)
	n := 0
	seen := map[string]int{}
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("commands.txt:%d: want tag, expect and command separated by tabs", n)
		}
		c := corpusCase{line: n, tag: parts[0], expect: parts[1], command: parts[2]}
		if strings.HasPrefix(c.command, `"`) {
			if c.command, err = strconv.Unquote(c.command); err != nil {
				t.Fatalf("commands.txt:%d: %v", n, err)
			}
		}
		switch c.tag {
		case "dcg", "codex", "report", "issue", "daily":
		default:
			t.Fatalf("commands.txt:%d: unknown tag %q", n, c.tag)
		}
		switch c.expect {
		case "danger", "daily", "block", "confirm", "allow":
		default:
			t.Fatalf("commands.txt:%d: unknown expectation %q", n, c.expect)
		}
		if prev, dup := seen[c.command]; dup {
			t.Fatalf("commands.txt:%d: the same command as line %d", n, prev)
		}
		seen[c.command] = n
		cs = append(cs, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cs
}

// corpusWorld is a home and a project as a person has them: the project is
// a git repository with a commit and uncommitted work, a .env beside an
// .env.example, Go and Node sources; the home holds credentials, Pi's agent
// folder and other agents' MCP files.
func corpusWorld(t *testing.T) (home, proj string) {
	t.Helper()
	root := t.TempDir()
	home, proj = filepath.Join(root, "home"), filepath.Join(root, "proj")
	files := map[string]string{
		"home/.aws/credentials":        "[default]\n",
		"home/.ssh/id_rsa":             "key\n",
		"home/.ssh/config":             "Host x\n",
		"home/.pi/agent/settings.json": "{}\n",
		"home/.config/app/config.toml": "a = 1\n",
		"home/Documents/notes.txt":     "notes\n",
		"home/.cursor/mcp.json":        "{}\n",
		"home/.npmrc":                  "//registry.npmjs.org/:_authToken=x\n",
		"home/.config/gh/hosts.yml":    "github.com:\n",
		"home/.kube/config":            "apiVersion: v1\n",
		"home/.git-credentials":        "https://u:p@example.com\n",
		"home/.docker/config.json":     "{}\n",
		"home/.netrc":                  "machine x\n",
		"home/.pi/agent/auth.json":     "{}\n",
		"home/.bash_history":           "ls\n",
		"proj/.env":                    "TOKEN=x\n",
		"proj/.env.example":            "TOKEN=\n",
		"proj/go.mod":                  "module example.com/p\n\ngo 1.22\n",
		"proj/main.go":                 "package main\n\nfunc main() {}\n",
		"proj/src/a.go":                "package src\n",
		"proj/src/b.go":                "package src\n",
		"proj/src/app.ts":              "export {}\n",
		"proj/docs/notes.md":           "# notes\n",
		"proj/README.md":               "# p\n",
		"proj/package.json":            `{"name":"p","scripts":{"test":"node --test"}}` + "\n",
		"proj/Makefile":                "all:\n\tgo build ./...\n",
		"proj/data/a.txt":              "a\n",
		"proj/data/b.txt":              "b\n",
		"proj/scripts/build.sh":        "#!/bin/sh\ngo build ./...\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", proj, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "go.mod", "main.go", "src")
	git("commit", "-q", "-m", "start")
	os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n\n// a morning's work\nfunc main() {}\n"), 0o600)
	return home, proj
}

func TestCommandCorpus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cases := readCorpus(t)
	home, proj := corpusWorld(t)
	s := &engine.Engine{Home: home, Cwd: proj,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}}
	var danger, caught, daily, allowed int
	byTag := map[string][2]int{}
	for _, c := range cases {
		d := s.Check(guard.Call{ToolName: "bash", Input: map[string]any{"command": c.command}})
		ok := false
		isDanger := c.expect == "danger" || c.expect == "block" || c.expect == "confirm"
		switch c.expect {
		case "danger":
			ok = d.Action == guard.Block || d.Action == guard.Confirm
		case "daily":
			ok = d.Allowed()
		case "allow":
			ok = d.Allowed()
		default:
			ok = d.Action == c.expect
		}
		if isDanger {
			danger++
			if d.Action == guard.Block || d.Action == guard.Confirm {
				caught++
			}
		} else {
			daily++
			if d.Allowed() {
				allowed++
			}
		}
		bt := byTag[c.tag]
		bt[0]++
		if ok {
			bt[1]++
		}
		byTag[c.tag] = bt
		if !ok {
			t.Errorf("commands.txt:%d [%s] want %s, got %s (%s): %q\n\t%s", c.line, c.tag, c.expect, d.Action, d.Code, c.command, d.Reason)
		}
	}
	if danger == 0 || daily == 0 {
		t.Fatalf("the corpus needs both kinds: %d dangerous, %d everyday", danger, daily)
	}
	pc := func(a, b int) float64 { return 100 * float64(a) / float64(b) }
	var tags []string
	for _, tag := range slices.Sorted(maps.Keys(byTag)) {
		v := byTag[tag]
		tags = append(tags, fmt.Sprintf("%s %d/%d", tag, v[1], v[0]))
	}
	t.Logf("command corpus: %d cases; dangerous caught %d/%d (%.1f%%); everyday allowed %d/%d (%.1f%%); as expected by source: %s",
		len(cases), caught, danger, pc(caught, danger), allowed, daily, pc(allowed, daily), strings.Join(tags, ", "))
	if len(cases) < 1000 {
		t.Errorf("the corpus has %d cases; it must keep at least 1,000", len(cases))
	}
	if pc(caught, danger) < 99 || pc(allowed, daily) < 99 {
		t.Errorf("scores below 99%%: dangerous caught %.1f%%, everyday allowed %.1f%%", pc(caught, danger), pc(allowed, daily))
	}
}
