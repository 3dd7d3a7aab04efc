package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/shell"
)

func TestShell(t *testing.T) {
	t.Parallel()
	base := mustMerge(t, "", "")
	userRules := mustMerge(t, `{"version": 1, "execRules": [{"id": "no-docker-prune", "command": "docker", "args": ["volume", "prune"], "action": "block"}], "execRuleActions": {"git-push": "allow"}}`, "")
	projRules := mustMerge(t, "", `{"version": 1, "execRules": [{"id": "ask-make", "command": "make", "args": ["release"], "action": "confirm"}], "execRuleActions": {"git-push": "block"}}`)
	type code struct{ Action, Code string }
	allow := code{ActionAllow, CodeAllowed}
	read := code{ActionBlock, CodeShellProtectedRead}
	write := code{ActionBlock, CodeShellProtectedWrite}
	dyn := code{ActionBlock, CodeShellDynamicPath}
	denied := code{ActionBlock, CodeModeDenied}
	tests := []struct {
		name string
		p    *Policy
		mode string
		call Call
		want code
	}{
		{"cat .env", base, "", call("bash", "command", "cat .env"), read},
		{"cat ~/.ssh/id_rsa", base, "", call("bash", "command", "cat ~/.ssh/id_rsa"), read},
		{"grep -r TOKEN .env", base, "", call("bash", "command", "grep -r TOKEN .env"), read},
		{"redirect from .env", base, "", call("bash", "command", "wc -l < .env"), read},
		{"sudo cat", base, "", call("bash", "command", "sudo -u root cat /home/u/.aws/credentials"), read},
		{"pipeline", base, "", call("bash", "command", "ls | cat auth.json"), read},
		{"subshell", base, "", call("bash", "command", "(cd src && cat ../.ENV)"), read},
		{"bash -c", base, "", call("bash", "command", `bash -c "cat .env"`), read},
		{"command substitution", base, "", call("bash", "command", `echo "$(cat .env)"`), read},
		{"shell protected kube", base, "", call("bash", "command", "cat ~/.kube/config"), read},
		{"glob reaches .env", base, "", call("bash", "command", "cat .e*"), dyn},
		{"glob reaches auth.json", base, "", call("bash", "command", "cat *.json"), dyn},
		{"variable path", base, "", call("bash", "command", "cat $HOME/.ssh/id_ed25519"), dyn},
		{"glob near miss", base, "", call("bash", "command", "cat src/*.go"), allow},
		{"glob star does not reach dotfiles", base, "", call("bash", "command", "cat *.go"), allow},
		{"quoted data passes", base, "", call("bash", "command", `echo "cat .env; docker volume prune"`), allow},
		{"heredoc data passes", base, "", call("bash", "command", "cat <<'EOF'\ncat .env\nEOF"), allow},
		{".env.example readable", base, "", call("bash", "command", "cat .env.example"), allow},
		{"write .env", base, "", call("bash", "command", "echo A=1 > .env"), write},
		{"write .env.example not allowed", base, "", call("bash", "command", "echo A= >> .env.example"), write},
		{"tee into .git", base, "", call("bash", "command", "echo x | tee .git/hooks/pre-commit"), write},
		{"parse error", base, "", call("bash", "command", "echo 'unterminated"), code{ActionBlock, CodeShellParse}},
		{"no command", base, "", call("bash"), code{ActionBlock, CodeShellNoCommand}},
		{"rm -rf /", base, "", call("bash", "command", "rm -rf /"), code{ActionBlock, CodeShellRule}},
		{"go test in sourceWrite", base, "", call("bash", "command", "go test ./..."), allow},
		{"go test in readOnly", base, ModeReadOnly, call("bash", "command", "go test ./..."), denied},
		{"ls in readOnly", base, ModeReadOnly, call("bash", "command", "ls -la src | head -n 5"), allow},
		{"git status in readOnly", base, ModeReadOnly, call("bash", "command", "git status --short"), allow},
		{"git commit in readOnly", base, ModeReadOnly, call("bash", "command", "git commit -m x"), denied},
		{"write md in docsWrite", base, ModeDocsWrite, call("bash", "command", "echo '- item' >> docs/notes.md"), allow},
		{"write go in docsWrite", base, ModeDocsWrite, call("bash", "command", "echo x > main.go"), denied},
		{"git push in sourceWrite", base, "", call("bash", "command", "git push origin main"), denied},
		{"git push in ship", base, ModeShip, call("bash", "command", "git push origin main"), code{ActionConfirm, CodeShellRule}},
		{"user allows git push", userRules, "", call("bash", "command", "git push origin main"), allow},
		{"user exec rule", userRules, "", call("bash", "command", "sudo docker volume prune -f"), code{ActionBlock, CodeExecRule}},
		{"user exec rule near miss", userRules, "", call("bash", "command", "docker volume ls"), allow},
		{"project blocks git push", projRules, ModeShip, call("bash", "command", "git push"), code{ActionBlock, CodeShellRule}},
		{"project exec rule confirm", projRules, ModeShip, call("bash", "command", "make release"), code{ActionConfirm, CodeExecRule}},
		{"project exec rule needs ship", projRules, "", call("bash", "command", "make release"), denied},
		{"mcp args.command", base, "", call("mcp", "tool", "run", "args", map[string]any{"command": "cat ~/.ssh/id_rsa"}), read},
		{"mcp args.command JSON string", base, "", call("mcp", "tool", "run", "args", `{"command": "cat .env"}`), code{ActionBlock, CodeProtectedPath}},
		{"glob through a symlink", base, "", call("bash", "command", "wc -l sneaky/*.go"), dyn},
		{"glob matching only .env.example", base, "", call("bash", "command", "cat .env.ex*"), allow},
		{"cd then relative read", base, "", call("bash", "command", "cd ~/.aws && cat credentials"), read},
		{"cd into project dir", base, "", call("bash", "command", "cd src && cat a.go"), allow},
		{"cd to a variable then relative read", base, "", call("bash", "command", `cd "$D" && cat notes.txt`), dyn},
		// issue 22, item 4: a loop over a glob is decided by what the glob
		// matches, unless something before it can create links.
		{"for loop over a glob", base, "", call("bash", "command", "for f in *.go; do cat $f; done"), allow},
		{"for loop after a write", base, "", call("bash", "command", "touch src/z.go; for f in src/*.go; do cat \"$f\"; done"), dyn},
		{"for loop over a variable", base, "", call("bash", "command", "for f in $FILES; do cat $f; done"), dyn},
		{"custom tool command", base, "", call("shell_exec", "command", "cat .npmrc"), read},
		// issue 22, item 3: destructive inside the project asks in
		// sourceWrite; ship-like confirmations still need ship.
		{"git clean -fd asks in sourceWrite", base, ModeSourceWrite, call("bash", "command", "git clean -fd"), code{ActionConfirm, CodeShellRule}},
		{"git branch -D asks", base, "", call("bash", "command", "git branch -D main"), code{ActionConfirm, CodeShellRule}},
		{"history prune asks", base, "", call("bash", "command", "git reflog expire --expire=now --all && git gc --prune=now"), code{ActionConfirm, CodeShellRule}},
		{"git stash clear in docsWrite is denied", base, ModeDocsWrite, call("bash", "command", "git stash clear"), denied},
		{"git push still needs ship", base, ModeSourceWrite, call("bash", "command", "git push"), denied},
		{"local and ship together need ship", base, ModeSourceWrite, call("bash", "command", "git clean -f && git push"), denied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := testFacts()
			f.Mode = tc.mode
			d := tc.p.Decide(tc.call, f)
			if diff := cmp.Diff(tc.want, code{d.Action, d.Code}); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\ndecision: %+v", diff, d)
			}
		})
	}
}

// Without Facts.Glob a glob is judged by every path it could match.
func TestShellGlobWithoutExpansion(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	f := testFacts()
	f.Glob = nil
	for cmd, want := range map[string]string{
		"cat *.go":     CodeShellDynamicPath, // could be id_rsa.go
		"cat *.ts":     CodeShellDynamicPath,
		"cat src/*.md": CodeShellDynamicPath,
		"cat *.pem":    CodeShellDynamicPath,
		"cat .e*":      CodeShellDynamicPath,
		"cat a.go":     CodeAllowed,
		"cat [a-c].go": CodeAllowed,
	} {
		if d := p.Decide(call("bash", "command", cmd), f); d.Code != want {
			t.Errorf("%s: %+v, want %s", cmd, d, want)
		}
	}
}

// FuzzDecideBash: whatever the line, the decision is one of the four
// actions; and the oracle: a line the gate's self-protection and the
// policy together let run (allow or warn) never writes, replaces or links
// to a registered path, by the reader's own Writes, Trees and Links (each
// literal path joined to every folder the command may run in).
func FuzzDecideBash(f *testing.F) {
	for _, s := range []string{"cat .env", "echo 'x", "bash -c 'cat ~/.ssh/id_rsa'", "for f in *; do cat $f; done", "git push", "a=$(cat .e*) && echo $a > .git/x",
		"cd .pi && echo '{}' > settings.json", "cp x ~/.pi/piagent-mcp-approvals.json", "mv .git/hooks /tmp/h", "ln -s ~/.pi/agent/settings.json s", "echo x | tee -a .mcp.json"} {
		f.Add(s)
	}
	p := mustMerge(f, "", "")
	reg := registry.NewSet(registry.List(registry.Input{Home: testHome, AgentDir: filepath.Join(testHome, ".pi", "agent"), Project: testProj, TempDir: "/tmp"}))
	g := &Guarded{Reg: reg, Home: testHome, Cwd: testProj}
	f.Fuzz(func(t *testing.T, cmd string) {
		in := Inspect(call("bash", "command", cmd))
		if _, stop := in.Self(g); stop {
			return
		}
		d := p.DecideInspection(&in, testFacts())
		switch d.Action {
		case ActionBlock, ActionConfirm:
			return
		case ActionAllow, ActionWarn:
		default:
			t.Fatalf("action %q", d.Action)
		}
		a, err := shell.Parse(cmd)
		if err != nil {
			t.Fatalf("%q does not parse (%v) and was let run: %+v", cmd, err, d)
		}
		// A word names the path the shell opens: "~" expanded, relative to
		// the project; not Pi's tool-path reading (no "@" dropped, no
		// file:// URL), which the guard also applies, to its words only
		// more strictly.
		abs := func(w shell.Word) string {
			switch {
			case w.Dynamic:
				return ""
			case w.Lit == "~":
				return testHome
			case strings.HasPrefix(w.Lit, "~/"):
				return filepath.Join(testHome, w.Lit[2:])
			case filepath.IsAbs(w.Lit):
				return filepath.Clean(w.Lit)
			}
			return filepath.Join(testProj, w.Lit)
		}
		for _, w := range append(shell.Writes(a), shell.Links(a)...) {
			if p := abs(w); p != "" {
				if r, ok := reg.Match(p); ok {
					t.Fatalf("%q was let run (%s) and writes or links %s, registered as %s", cmd, d.Action, p, r)
				}
			}
		}
		for _, w := range shell.Trees(a) {
			if p := abs(w); p != "" {
				if r, ok := reg.Match(p); ok {
					t.Fatalf("%q was let run (%s) and replaces %s, registered as %s", cmd, d.Action, p, r)
				}
				if r, ok := reg.Holds(p); ok {
					t.Fatalf("%q was let run (%s) and replaces %s, which holds %s", cmd, d.Action, p, r)
				}
			}
		}
	})
}
