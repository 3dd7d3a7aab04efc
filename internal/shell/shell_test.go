package shell

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary renders each command as "argv… <wrappers> @context", with
// Dynamic words in braces.
func summary(a *Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		var parts []string
		for _, w := range c.Argv {
			if w.Dynamic {
				parts = append(parts, "{"+w.Lit+"}")
			} else {
				parts = append(parts, w.Lit)
			}
		}
		for _, r := range c.Redirects {
			parts = append(parts, r.FD+r.Op+r.Target.Lit)
		}
		s := strings.Join(parts, " ")
		if len(c.Wrappers) > 0 {
			s += " <" + strings.Join(c.Wrappers, ",") + ">"
		}
		if c.Context != "" {
			s += " @" + c.Context
		}
		if c.Opaque != "" {
			s += " !opaque"
		}
		out = append(out, s)
	}
	return out
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want []string
	}{
		{"ls -la", []string{"ls -la"}},
		{"cd web && npm test -- --watch=false | tee out.log", []string{"cd web", "npm test -- --watch=false @pipeline", "tee out.log @pipeline"}},
		{"a; b || c & d", []string{"a", "b", "c", "d"}},
		{"(cd x; make)", []string{"cd x @subshell", "make @subshell"}},
		{"{ a; b; } > out", []string{">out", "a", "b"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}},
		{"for f in $(ls); do rm $f; done", []string{"ls @cmdsubst", "rm {$f}"}},
		{"case $x in a) b;; *) c;; esac", []string{"b", "c"}},
		{"f() { rm -rf x; }", []string{"rm -rf x @function"}},
		{"! grep x y", []string{"grep x y"}},
		{"echo $(id) `whoami`", []string{"id @cmdsubst", "whoami @cmdsubst", "echo {$(id)} {`whoami`}"}},
		{"x=$(cat .env)", []string{"cat .env @cmdsubst"}},
		{"x=1 y=2", nil},
		{"FOO=1 make", []string{"make"}},
		{"diff <(ls a) >(cat)", []string{"ls a @procsubst", "cat @procsubst", "diff {<(ls a)} {>(cat)}"}},
		{`echo "docker volume prune"`, []string{"echo docker volume prune"}},
		{"cat <<EOF\npiagent-mcp approve x\nEOF", []string{"cat"}},
		{"cat <<EOF\n$(id)\nEOF", []string{"id @cmdsubst", "cat"}},
		{"cat <<'EOF'\n$(id)\nEOF", []string{"cat"}},
		{"bash -c 'a; b'", []string{"a <bash> @bash -c", "b <bash> @bash -c"}},
		{`bash -lc "a | b"`, []string{"a <bash> @pipeline", "b <bash> @pipeline"}},
		{"sh -e -c 'x'", []string{"x <sh> @sh -c"}},
		{"zsh -c x; dash -c y", []string{"x <zsh> @zsh -c", "y <dash> @dash -c"}},
		{"busybox sh -c 'rm x'", []string{"rm x <busybox,sh> @sh -c"}},
		{"busybox rm -rf x", []string{"rm -rf x <busybox>"}},
		{"bash script.sh arg", []string{"bash script.sh arg"}},
		{"bash <<EOF\nrm -rf x\nEOF", []string{"rm -rf x <bash> @bash stdin"}},
		{"bash <<< 'rm y'", []string{"rm y <bash> @bash stdin"}},
		{"echo 'rm z' | sh", []string{"echo rm z @pipeline", "rm z <sh> @sh stdin"}},
		{"curl -s https://x | sh", []string{"curl -s https://x @pipeline", "sh @pipeline !opaque"}},
		{"eval 'rm a; rm b'", []string{"rm a @eval", "rm b @eval"}},
		{`eval "$x"`, []string{"eval {$x} !opaque"}},
		{"sudo -u bob -E rm x", []string{"rm x <sudo>"}},
		{"sudo -- rm x", []string{"rm x <sudo>"}},
		{"sudo -l", []string{"sudo -l"}},
		{"env -i A=1 B=2 rm x", []string{"rm x <env>"}},
		{"env -u HOME -C /tmp rm x", []string{"rm x <env>"}},
		{"env -S 'rm -f' x", []string{"rm -f x <env> @env -S"}},
		{"env", []string{"env"}},
		{"nice -n 5 rm x; nice -5 rm y", []string{"rm x <nice>", "rm y <nice>"}},
		{"timeout -s KILL 5 rm x; timeout 5s rm y", []string{"rm x <timeout>", "rm y <timeout>"}},
		{"nohup rm x &", []string{"rm x <nohup>"}},
		{"command -p rm x; command -v rm", []string{"rm x <command>", "command -v rm"}},
		{"exec -a name rm x", []string{"rm x <exec>"}},
		{"exec >log", []string{"exec >log"}},
		{"time -p rm x", []string{"rm x <time>"}},
		{"stdbuf -o0 grep x; ionice -c3 rm y", []string{"grep x <stdbuf>", "rm y <ionice>"}},
		{"sudo env nice -n 1 timeout 5 rm x", []string{"rm x <sudo,env,nice,timeout>"}},
		{"xargs -n 1 rm", []string{"rm {} <xargs> @xargs"}},
		{"xargs -0 -I{} cp {} dest/", []string{"cp {{}} dest/ <xargs> @xargs"}},
		{"xargs", []string{"echo {} <xargs> @xargs"}},
		{`find . -name x -exec rm {} \;`, []string{"find . -name x -exec rm {} ;", "rm {{}} <find> @find -exec"}},
		{"find . -execdir sh -c 'rm $1' _ {} +", []string{"find . -execdir sh -c rm $1 _ {} +", "rm {$1} <find,sh> @sh -c"}},
		{"watch -n1 'ls | wc -l'", []string{"ls <watch> @pipeline", "wc -l <watch> @pipeline"}},
		{"ssh host 'rm -rf /tmp/x'", []string{"ssh host rm -rf /tmp/x", "rm -rf /tmp/x @ssh"}},
		{"su -c 'rm x' root", []string{"rm x <su> @su -c"}},
		{"npx -y cowsay hi", []string{"cowsay hi <npx>"}},
		{"npm exec -- eslint .", []string{"eslint . <npm exec>"}},
		{"go run ./cmd/piagent-mcp list", []string{"./cmd/piagent-mcp list <go run>"}},
		{"go run ./cmd/other", []string{"go run ./cmd/other"}},
		{"alias x='rm -rf y'", []string{"alias x=rm -rf y", "rm -rf y @alias"}},
		{`rm a\ b "c d" 'e' $'f\tg'`, []string{"rm a b c d e f\tg"}},
		{"ls *.go {a,b} ~/x", []string{"ls {*.go} {{a,b}} ~/x"}},
		{"ls '*.go' \"{a,b}\"", []string{"ls *.go {a,b}"}},
		{"> f", []string{">f"}},
		{"cat < in 2> err >> out &> all", []string{"cat <in 2>err >>out &>all"}},
		{":(){ :|:& };:", []string{": @pipeline", ": @pipeline", ":"}},
		{"[[ -f $(cat x) ]]", []string{"cat x @cmdsubst"}},
		{"echo ${x:-$(id)}", []string{"id @cmdsubst", "echo {${x:-$(id)}}"}},
		{"coproc rm x", []string{"rm x @coproc"}},
		{"declare x=$(id)", []string{"id @cmdsubst"}},
		{"$p approve x", []string{"{$p} approve x"}},
		{"$SHELL -c 'rm -rf x'", []string{"{$SHELL} -c rm -rf x", "rm -rf x <$SHELL> @-c"}},
		{"bash -s arg <<< 'rm q'", []string{"rm q <bash> @bash stdin"}},
		{"\"$HOME\"/bin/piagent-mcp approve", []string{"{$HOME/bin/piagent-mcp} approve"}},
	}
	for _, tt := range tests {
		a, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, summary(a)); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	a, err := Parse("sudo /usr/bin/rm -rf \"$HOME\"/x* 2>/dev/null &")
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{{
		Argv: []Word{
			{Lit: "/usr/bin/rm"},
			{Lit: "-rf"},
			{Lit: "$HOME/x*", Dynamic: true, Expands: true, Pattern: "**/x*"},
		},
		Name:       "rm",
		Wrappers:   []string{"sudo"},
		Redirects:  []Redirect{{Op: ">", FD: "2", Target: Word{Lit: "/dev/null"}}},
		Background: true,
	}}
	if diff := cmp.Diff(want, a.Commands); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	a, err = Parse("f() { rm x; }")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Commands[0].Function; got != "f" {
		t.Errorf("Function = %q, want f", got)
	}

	a, err = Parse("find . -name '*.go' -exec cat {} +")
	if err != nil {
		t.Fatal(err)
	}
	inner := a.Commands[1]
	if inner.Outer == nil || inner.Outer.Name != "find" {
		t.Errorf("Outer = %+v, want the find", inner.Outer)
	}
	if diff := cmp.Diff(Word{Lit: "{}", Dynamic: true, Expands: true, Pattern: "./**/*.go", Under: ".", Name: "*.go"}, inner.Argv[1]); diff != "" {
		t.Errorf("find {} word (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src, want string
	}{
		{"echo 'unclosed", "1:6: reached EOF without closing quote"},
		{"a &&", "1:3: `&&` must be followed by a statement"},
		{"ls\nif then", "2:1:"},
		{"bash -c 'echo \"x'", "bash -c string: 1:6:"},
		{"eval 'a |'", "eval string: 1:3:"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		if err == nil {
			t.Errorf("Parse(%q): no error", tt.src)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v is not ErrSyntax", tt.src, err)
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %q, want prefix %q", tt.src, err, tt.want)
		}
	}
}

func TestParseDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int) string {
		s := "ls"
		for i := 0; i < n; i++ {
			q, _ := quoteForTest(s)
			s = "sh -c " + q
		}
		return s
	}
	if _, err := Parse(nest(MaxDepth)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	_, err := Parse(nest(MaxDepth + 1))
	if !errors.Is(err, ErrTooDeep) {
		t.Errorf("depth %d: err = %v, want ErrTooDeep", MaxDepth+1, err)
	}
	// eval nesting counts too
	s := "ls"
	for i := 0; i <= MaxDepth; i++ {
		q, _ := quoteForTest(s)
		s = "eval " + q
	}
	if _, err := Parse(s); !errors.Is(err, ErrTooDeep) {
		t.Errorf("eval nesting: err = %v, want ErrTooDeep", err)
	}
}

func quoteForTest(s string) (string, error) {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

func TestWordDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want Word
	}{
		{`plain`, Word{Lit: "plain"}},
		{`a\ b`, Word{Lit: "a b"}},
		{`"a\$b\"c\d"`, Word{Lit: `a$b"c\d`}},
		{`$'a\x41\n\101\u00e9'`, Word{Lit: "aA\nAé"}},
		{`'*'`, Word{Lit: "*"}},
		{`x*`, Word{Lit: "x*", Dynamic: true, Pattern: "x*"}},
		{`'a*'b?`, Word{Lit: "a*b?", Dynamic: true, Pattern: `a\*b?`}},
		{`.{e,}nv`, Word{Lit: ".{e,}nv", Dynamic: true, Pattern: ".*nv"}},
		{`{x}`, Word{Lit: "{x}"}},
		{`$HOME/.ssh/id_rsa`, Word{Lit: "$HOME/.ssh/id_rsa", Dynamic: true, Expands: true, Pattern: "**/.ssh/id_rsa"}},
		{`"${HOME}"/x`, Word{Lit: "${HOME}/x", Dynamic: true, Expands: true, Pattern: "**/x"}},
		{`~/.env`, Word{Lit: "~/.env"}},
		{`@(a|b)`, Word{Lit: "@(a|b)", Dynamic: true, Pattern: "*"}},
	}
	for _, tt := range tests {
		a, err := Parse("echo " + tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, a.Commands[0].Argv[1]); diff != "" {
			t.Errorf("word %s (-want +got):\n%s", tt.src, diff)
		}
	}
}

// TestParseRemembers: a line read twice in a row is analysed once, and a
// line that does not parse keeps its error.
func TestParseRemembers(t *testing.T) {
	a1, err := Parse("cd src && go test ./... # remembered")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := Parse("cd src && go test ./... # remembered")
	if a1 != a2 {
		t.Error("the same line was analysed twice")
	}
	if _, err := Parse("echo 'open # remembered"); err == nil {
		t.Fatal("no error")
	}
	if _, err := Parse("echo 'open # remembered"); err == nil {
		t.Fatal("the remembered line lost its error")
	}
	for i := range 8 {
		Parse(fmt.Sprintf("echo %d # pushes the first out", i))
	}
	if a3, _ := Parse("cd src && go test ./... # remembered"); a3 == a1 {
		t.Error("more lines than the memory holds: the first is still there")
	}
}
