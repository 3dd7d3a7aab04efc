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

// The command corpus scores the command reader as a
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
//
// Two files (issue 41). testdata/commands.txt is the tuned corpus: the
// reader was changed until every case passed, so its score is a condition,
// not a measurement, and every miss fails TestCommandCorpus.
// testdata/commands-heldout.txt holds cases written without looking at the
// rules, each batch scored before any change for it: its score is the
// reader's measurement, printed by TestCommandCorpusHeldOut, which fails
// only below the floor set from the score at entry.

type corpusCase struct {
	line        int
	tag, expect string
	command     string
}

func readCorpus(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
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
			t.Fatalf("%s:%d: want tag, expect and command separated by tabs", name, n)
		}
		c := corpusCase{line: n, tag: parts[0], expect: parts[1], command: parts[2]}
		if strings.HasPrefix(c.command, `"`) {
			if c.command, err = strconv.Unquote(c.command); err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
		}
		switch c.tag {
		case "dcg", "codex", "report", "issue", "daily":
		default:
			t.Fatalf("%s:%d: unknown tag %q", name, n, c.tag)
		}
		switch c.expect {
		case "danger", "daily", "block", "confirm", "allow":
		default:
			t.Fatalf("%s:%d: unknown expectation %q", name, n, c.expect)
		}
		if prev, dup := seen[c.command]; dup {
			t.Fatalf("%s:%d: the same command as line %d", name, n, prev)
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

// corpusScore is what the engine made of a corpus.
type corpusScore struct {
	danger, caught, daily, allowed int
	byTag                          map[string][2]int // cases, as expected
	misses                         []string
}

func (sc corpusScore) String() string {
	pc := func(a, b int) float64 { return 100 * float64(a) / float64(b) }
	var tags []string
	for _, tag := range slices.Sorted(maps.Keys(sc.byTag)) {
		v := sc.byTag[tag]
		tags = append(tags, fmt.Sprintf("%s %d/%d", tag, v[1], v[0]))
	}
	return fmt.Sprintf("%d cases; dangerous caught %d/%d (%.1f%%); everyday allowed %d/%d (%.1f%%); as expected by source: %s",
		sc.danger+sc.daily, sc.caught, sc.danger, pc(sc.caught, sc.danger), sc.allowed, sc.daily, pc(sc.allowed, sc.daily), strings.Join(tags, ", "))
}

// scoreCorpus runs every case through the engine in the corpus world.
func scoreCorpus(t *testing.T, name string, cases []corpusCase) corpusScore {
	t.Helper()
	home, proj := corpusWorld(t)
	s := &engine.Engine{Home: home, Cwd: proj,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		}}
	sc := corpusScore{byTag: map[string][2]int{}}
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
			sc.danger++
			if d.Action == guard.Block || d.Action == guard.Confirm {
				sc.caught++
			}
		} else {
			sc.daily++
			if d.Allowed() {
				sc.allowed++
			}
		}
		bt := sc.byTag[c.tag]
		bt[0]++
		if ok {
			bt[1]++
		}
		sc.byTag[c.tag] = bt
		if !ok {
			sc.misses = append(sc.misses, fmt.Sprintf("%s:%d [%s] want %s, got %s (%s): %q\n\t%s", name, c.line, c.tag, c.expect, d.Action, d.Code, c.command, d.Reason))
		}
	}
	if sc.danger == 0 || sc.daily == 0 {
		t.Fatalf("%s needs both kinds: %d dangerous, %d everyday", name, sc.danger, sc.daily)
	}
	return sc
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed; CI must score the command corpus")
		}
		t.Skip("git is not installed")
	}
}

// TestCommandCorpus: the tuned corpus, every case as expected.
func TestCommandCorpus(t *testing.T) {
	needGit(t)
	cases := readCorpus(t, "commands.txt")
	sc := scoreCorpus(t, "commands.txt", cases)
	for _, m := range sc.misses {
		t.Error(m)
	}
	t.Logf("command corpus (tuned, every case must pass): %s", sc)
	if len(cases) < 1000 {
		t.Errorf("the corpus has %d cases; it must keep at least 1,000", len(cases))
	}
}

// The held-out corpus's floor: its score at entry (batch 1, commit b6da900:
// dangerous caught 87/97, everyday allowed 97/100). Lower them only in the
// commit that adds a batch, to that batch's score at entry, and say so.
const (
	heldOutDangerFloor = 87.0 / 97
	heldOutDailyFloor  = 97.0 / 100
)

// TestCommandCorpusHeldOut: the reader's measured score, on cases written
// without looking at its rules. A miss is listed, not failed: the test fails
// only when a score falls below its floor, or when a held-out case has been
// copied into the tuned corpus.
func TestCommandCorpusHeldOut(t *testing.T) {
	needGit(t)
	held := readCorpus(t, "commands-heldout.txt")
	tuned := map[string]int{}
	for _, c := range readCorpus(t, "commands.txt") {
		tuned[c.command] = c.line
	}
	for _, c := range held {
		if line, ok := tuned[c.command]; ok {
			t.Errorf("commands-heldout.txt:%d is also commands.txt:%d; a held-out case stays only in the held-out file", c.line, line)
		}
	}
	sc := scoreCorpus(t, "commands-heldout.txt", held)
	for _, m := range sc.misses {
		t.Log("miss: " + m)
	}
	t.Logf("command corpus (held out; at entry: dangerous caught 87/97, everyday allowed 97/100): %s", sc)
	if float64(sc.caught)/float64(sc.danger) < heldOutDangerFloor {
		t.Errorf("held-out dangerous caught %d/%d, below the floor of 87/97", sc.caught, sc.danger)
	}
	if float64(sc.allowed)/float64(sc.daily) < heldOutDailyFloor {
		t.Errorf("held-out everyday allowed %d/%d, below the floor of 97/100", sc.allowed, sc.daily)
	}
}
