// Command mutate is the mutation check (issue 41): it copies the checkout
// into a scratch folder and, one mutation at a time, weakens one security
// decision there, runs the tests that should notice, and puts the code
// back. A mutation the tests do not notice has survived: the decision it
// weakens is not held by any test.
//
//	scripts/mutate.sh                 every mutation in test/mutate/mutations.txt
//	scripts/mutate.sh R1 'SC*'        the named ones (shell patterns on the id)
//	scripts/mutate.sh -list           the mutations, without running them
//
// Each mutation's test command first runs on the unmutated copy (once per
// distinct command): a command that fails there cannot kill anything, and
// the run says so instead of counting a kill. A Go mutation that does not
// compile (go vet of its package fails) is reported as invalid, not killed.
//
// The exit status is 0 when every mutation was killed, 1 otherwise.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Mutation is one weakening of one decision.
type Mutation struct {
	ID   string
	File string // relative to the checkout
	Test string // a bash command line, run in the copy's root
	What string // the decision it weakens, in words
	Old  string // text that occurs exactly once in File
	New  string // what replaces it ("" deletes it)
	Line int    // where its block starts in the list, for messages
}

// Parse reads the list's format (see mutations.txt's header).
func Parse(r io.Reader) ([]Mutation, error) {
	var out []Mutation
	var cur *Mutation
	section := "" // "", "old" or "new"
	var body []string
	flush := func() error {
		if cur == nil {
			return nil
		}
		text := strings.Join(trimBlankEnd(body), "\n")
		switch section {
		case "old":
			cur.Old = text
		case "new":
			cur.New = text
		}
		body, section = nil, ""
		return nil
	}
	finish := func() error {
		if cur == nil {
			return nil
		}
		flush()
		switch {
		case cur.File == "" || cur.Test == "" || cur.What == "":
			return fmt.Errorf("line %d: mutation %s needs file:, test: and what:", cur.Line, cur.ID)
		case cur.Old == "":
			return fmt.Errorf("line %d: mutation %s has no --- old text", cur.Line, cur.ID)
		case cur.Old == cur.New:
			return fmt.Errorf("line %d: mutation %s changes nothing", cur.Line, cur.ID)
		}
		for _, m := range out {
			if m.ID == cur.ID {
				return fmt.Errorf("line %d: mutation %s is listed twice", cur.Line, cur.ID)
			}
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "== "):
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &Mutation{ID: strings.TrimSpace(line[3:]), Line: n}
			if !regexp.MustCompile(`^[A-Za-z0-9-]+$`).MatchString(cur.ID) {
				return nil, fmt.Errorf("line %d: mutation id %q: want letters, digits and -", n, cur.ID)
			}
		case cur == nil:
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
				return nil, fmt.Errorf("line %d: text outside a mutation (a mutation starts with '== ID')", n)
			}
		case line == "--- old":
			flush()
			section = "old"
		case line == "+++ new":
			flush()
			section = "new"
		case section != "" && strings.HasPrefix(line, "# "):
			// A comment at the line's start ends the text: Go and
			// TypeScript never begin a line so. (Before, the comment
			// between two mutations became part of the first one's new
			// text, which then did not build, or failed for that alone.)
			flush()
		case section != "":
			body = append(body, line)
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		default:
			k, v, ok := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch {
			case ok && k == "file":
				cur.File = v
			case ok && k == "test":
				cur.Test = v
			case ok && k == "what":
				cur.What = v
			default:
				return nil, fmt.Errorf("line %d: want file:, test:, what:, --- old or +++ new, got %q", n, line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

func trimBlankEnd(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Apply is the mutated content of src, or an error when Old does not occur
// exactly once in it (the list has gone stale).
func (m Mutation) Apply(src []byte) ([]byte, error) {
	switch n := bytes.Count(src, []byte(m.Old)); n {
	case 1:
		return bytes.Replace(src, []byte(m.Old), []byte(m.New), 1), nil
	case 0:
		return nil, fmt.Errorf("mutation %s: its old text is not in %s (the code changed: update test/mutate/mutations.txt)", m.ID, m.File)
	default:
		return nil, fmt.Errorf("mutation %s: its old text occurs %d times in %s; make it unique", m.ID, n, m.File)
	}
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fl := flag.NewFlagSet("mutate", flag.ContinueOnError)
	listFile := fl.String("file", "test/mutate/mutations.txt", "the list of mutations")
	listOnly := fl.Bool("list", false, "print the mutations and exit")
	keep := fl.Bool("keep", false, "keep the scratch copy and the logs")
	timeout := fl.Duration("timeout", 20*time.Minute, "the bound on one test command")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: error: %v\n", err)
		return 2
	}
	f, err := os.Open(filepath.Join(root, *listFile))
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: error: %v\n", err)
		return 2
	}
	all, err := Parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: error: %s: %v\n", *listFile, err)
		return 2
	}
	var chosen []Mutation
	for _, m := range all {
		if len(fl.Args()) == 0 || matchesAny(m.ID, fl.Args()) {
			chosen = append(chosen, m)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintf(os.Stderr, "mutate: error: no mutation in %s matches %q\n", *listFile, fl.Args())
		return 2
	}
	if *listOnly {
		for _, m := range chosen {
			fmt.Printf("%-18s %-40s %s\n", m.ID, m.File, m.What)
		}
		return 0
	}

	// An interrupt ends the test running and removes the scratch copy.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	scratch, err := os.MkdirTemp("", "piagent-mutate-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: error: %v\n", err)
		return 2
	}
	if *keep {
		fmt.Fprintf(os.Stderr, "mutate: the scratch copy and logs stay in %s\n", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	tree := filepath.Join(scratch, "tree")
	if err := copyTree(root, tree); err != nil {
		fmt.Fprintf(os.Stderr, "mutate: error: copying the checkout: %v\n", err)
		return 2
	}
	logs := filepath.Join(scratch, "logs")
	os.MkdirAll(logs, 0o755)

	// The baseline: each distinct command passes on the unmutated copy.
	baseline := map[string]error{}
	for _, m := range chosen {
		if _, done := baseline[m.Test]; done {
			continue
		}
		fmt.Fprintf(os.Stderr, "mutate: baseline: %s\n", m.Test)
		_, out, err := runTest(ctx, tree, m.Test, "", *timeout)
		if err != nil {
			os.WriteFile(filepath.Join(logs, "baseline-"+m.ID+".log"), out, 0o644)
			fmt.Fprintf(os.Stderr, "mutate: error: %q fails without any mutation (%v); it cannot kill one:\n%s\n", m.Test, err, tail(out, 30))
		}
		baseline[m.Test] = err
	}

	type result struct {
		m       Mutation
		verdict string
		took    time.Duration
		killers []string
	}
	var results []result
	bad := 0
	for _, m := range chosen {
		start := time.Now()
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "mutate: interrupted")
			return 2
		}
		verdict, killers := mutateOne(ctx, tree, logs, m, baseline[m.Test], *timeout)
		r := result{m, verdict, time.Since(start), killers}
		results = append(results, r)
		if verdict != "killed" {
			bad++
		}
		fmt.Fprintf(os.Stderr, "mutate: %-18s %-9s %5.0fs  %s\n", m.ID, verdict, r.took.Seconds(), strings.Join(killers, " "))
	}

	fmt.Printf("\n%-18s %-9s %6s  %-60s %s\n", "ID", "RESULT", "TIME", "WHAT", "FAILED TESTS")
	killed := 0
	for _, r := range results {
		if r.verdict == "killed" {
			killed++
		}
		fmt.Printf("%-18s %-9s %5.0fs  %-60s %s\n", r.m.ID, r.verdict, r.took.Seconds(), clip(r.m.What, 60), strings.Join(r.killers, " "))
	}
	fmt.Printf("\n%d of %d mutations killed", killed, len(results))
	if bad > 0 {
		fmt.Printf("; %d not (survived: no test noticed; invalid: it does not build; stale: the code changed; baseline: its tests fail without it)", bad)
	}
	fmt.Println()
	if bad > 0 {
		return 1
	}
	return 0
}

// mutateOne applies m in tree, runs its test, restores the file, and
// returns the verdict and the tests that failed.
func mutateOne(ctx context.Context, tree, logs string, m Mutation, baseErr error, timeout time.Duration) (string, []string) {
	if baseErr != nil {
		return "baseline", nil
	}
	p := filepath.Join(tree, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: %s: %v\n", m.ID, err)
		return "stale", nil
	}
	mutated, err := m.Apply(orig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: %v\n", err)
		return "stale", nil
	}
	fi, _ := os.Stat(p)
	if err := os.WriteFile(p, mutated, fi.Mode().Perm()); err != nil {
		fmt.Fprintf(os.Stderr, "mutate: %s: %v\n", m.ID, err)
		return "stale", nil
	}
	defer os.WriteFile(p, orig, fi.Mode().Perm())
	if strings.HasSuffix(m.File, ".go") {
		vet := exec.Command("go", "vet", "./"+path.Dir(m.File)+"/")
		vet.Dir = tree
		if out, err := vet.CombinedOutput(); err != nil {
			os.WriteFile(filepath.Join(logs, m.ID+".log"), out, 0o644)
			fmt.Fprintf(os.Stderr, "mutate: %s does not build:\n%s\n", m.ID, tail(out, 10))
			return "invalid", nil
		}
	}
	killers, out, err := runTest(ctx, tree, m.Test, m.ID, timeout)
	os.WriteFile(filepath.Join(logs, m.ID+".log"), out, 0o644)
	if err == nil {
		return "survived", nil
	}
	if ctx.Err() != nil {
		return "interrupted", nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "killed", []string{"(timed out)"}
	}
	return "killed", killers
}

// runTest runs a test command line in dir and returns the names of the
// tests that failed (Go's "--- FAIL: X", Node's "not ok N - X").
func runTest(parent context.Context, dir, line, id string, timeout time.Duration) ([]string, []byte, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	// Its own process group, ended whole: go test's children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), "PIAGENT_MUTATION="+id)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	var failed []string
	seen := map[string]bool{}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`),
		regexp.MustCompile(`(?m)^not ok \d+ - (.+)$`),
	} {
		for _, m := range re.FindAllSubmatch(out, -1) {
			name := string(m[1])
			if strings.Contains(name, " ") {
				name = `"` + clip(name, 50) + `"`
			}
			if !seen[name] {
				seen[name] = true
				failed = append(failed, name)
			}
		}
	}
	return failed, out, err
}

func matchesAny(id string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, id); ok {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// moduleRoot is the folder holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; run from the checkout")
		}
		dir = parent
	}
}

// copyTree copies the checkout into dst without .git; each node_modules
// folder becomes a link to the original (the installed Pis and Node are
// read, never mutated).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case rel == ".git" && d.IsDir():
			return filepath.SkipDir
		case rel == ".git":
			return nil // a work tree's gitdir: file; git must not reach the real repository
		case d.IsDir() && d.Name() == "node_modules":
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(p, target); err != nil {
				return err
			}
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, fi.Mode().Perm())
		}
		return nil // sockets, FIFOs: not part of a checkout
	})
}
