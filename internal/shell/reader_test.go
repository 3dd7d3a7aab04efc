package shell

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReaderIssue22 covers issue 22's reader, rule by rule: the working
// folder followed through a line, deletes decided by where they land,
// code read through interpreters, printf, make, git aliases and command
// variables, and programs the reader does not know.
func TestReaderIssue22(t *testing.T) {
	t.Parallel()
	dirty := testCtx
	dirty.Dirty = true
	tests := []struct {
		src  string
		ctx  Context
		want []string
	}{
		// cd is followed; a cd may fail, so the start stays possible
		{src: "cd .. && rm -rf proj", want: []string{"rm-project:confirm"}},
		{src: "cd src && rm -rf ../../proj", want: []string{"rm-project:confirm"}},
		{src: "cd src; rm -rf ../../proj", want: []string{"rm-outside:block", "rm-project:confirm"}}, // if the cd fails, /home/proj
		{src: "cd .. && rm -rf other", want: []string{"rm-outside:block"}},
		{src: "cd /tmp && rm -rf build", want: nil},
		{src: "(cd ..) && rm -rf proj", want: nil}, // a subshell's cd stays there
		{src: "cd \"$X\" && rm -rf build", want: []string{"rm-unknown:confirm"}},
		{src: "cd ~ && rm -rf *", want: []string{"rm-root:block"}},
		{src: "cd ~; rm -rf *", want: []string{"rm-project:confirm", "rm-root:block"}},
		// where a delete lands
		{src: "rm -rf ~/Documents", want: []string{"rm-outside:block"}},
		{src: "rm -rf /opt/app", want: []string{"rm-outside:block"}},
		{src: "rm -rf build /tmp/x", want: nil},
		{src: "rm -rf ${TMPDIR:-/tmp}/build", want: nil},
		{src: "rm -rf $(mktemp -d)", want: nil},
		{src: "rm -rf ${HOME:-/tmp}", want: []string{"rm-root:block"}},
		{src: "rsync -a --delete /tmp/empty/ ~/", want: []string{"rm-root:block"}},
		{src: "rsync -a --delete /tmp/empty/ src/", want: []string{"rsync-delete:confirm"}},
		{src: "rsync -a --delete build/ /tmp/mirror/", want: nil},
		{src: "npx rimraf ~", want: []string{"rm-root:block"}},
		// destructive git in the work tree asks, with or without changes
		{src: "git reset --hard", ctx: dirty, want: []string{"git-reset-hard:confirm"}},
		{src: "git switch --discard-changes main", ctx: dirty, want: []string{"git-discard:confirm"}},
		{src: "builtin command git reset --hard", want: []string{"git-reset-hard:confirm"}},
		{src: "g\\it reset --hard", want: []string{"git-reset-hard:confirm"}},
		// interpreters: literal code is read through, computed code asks
		{src: `python3 -c "import os; os.system('rm -rf ~')"`, want: []string{"rm-root:block"}},
		{src: `python3 -c "import subprocess; subprocess.run(['rm', '-rf', '/'])"`, want: []string{"rm-root:block"}},
		{src: `python3 -c "import shutil; shutil.rmtree('/home')"`, want: []string{"rm-root:block"}},
		{src: `python3 -c "import shutil; shutil.rmtree('build')"`, want: nil},
		{src: `node -e "require('child_process').execSync('rm -rf ~')"`, want: []string{"rm-root:block"}},
		{src: `node -e "require('fs').rmSync(process.env.HOME, {recursive: true})"`, want: []string{"opaque-shell:confirm"}},
		{src: `perl -e 'system("rm -rf ~")'`, want: []string{"rm-root:block"}},
		{src: "perl -e '`rm -rf ~`'", want: []string{"rm-root:block"}},
		{src: `ruby -e 'system("rm", "-rf", "/")'`, want: []string{"rm-root:block"}},
		{src: `awk 'BEGIN{system("rm -rf ~")}'`, want: []string{"rm-root:block"}},
		{src: `awk '{ "date" | getline d }'`, want: []string{"opaque-shell:confirm"}},
		{src: `python3 -c "import os; os.system(input())"`, want: []string{"opaque-shell:confirm"}},
		{src: "python3 - <<'EOF'\nimport os\nos.system('rm -rf ~')\nEOF", want: []string{"rm-root:block"}},
		{src: `python3 -c "print(1)"`, want: nil},
		{src: `node -e "console.log(/x/.exec('x'))"`, want: nil},
		// text fed to a shell
		{src: `printf '%s\n' 'rm -rf ~' | bash`, want: []string{"rm-root:block"}},
		{src: `printf '%q\n' x | bash`, want: []string{"opaque-shell:confirm"}},
		{src: "make -f /dev/stdin <<'EOF'\nall:\n\t@rm -rf ~\nEOF", want: []string{"rm-root:block"}},
		{src: "make -f - < Makefile.evil", want: []string{"opaque-shell:confirm"}},
		// git runs commands from its configuration
		{src: "git config alias.nuke '!rm -rf ~' && git nuke", want: []string{"rm-root:block"}},
		{src: "git -c core.pager='rm -rf ~' log", want: []string{"rm-root:block"}},
		{src: "GIT_SSH_COMMAND='rm -rf ~' git fetch", want: []string{"rm-root:block"}},
		{src: "EDITOR=vim git commit", want: nil},
		// programs the reader does not know
		{src: "parallel rm -rf ::: ~", want: []string{"rm-root:block"}},
		{src: "hyperfine 'rm -rf ~'", want: []string{"rm-root:block"}},
		{src: "docker exec app rm -rf /", want: []string{"rm-root:block"}},
		{src: "poetry run pytest", want: nil},
		{src: "hyperfine 'go test ./...'", want: nil},
		// scripts the reader cannot see
		{src: "bash /tmp/x.sh", want: []string{"opaque-shell:confirm"}},
		{src: "python3 /tmp/x.py", want: []string{"opaque-shell:confirm"}},
		{src: "bash scripts/build.sh", want: nil},
		{src: "python3 -m pytest", want: nil},
		{src: "gpg --export-secret-keys", want: []string{"secret-export:block"}},
		// found by the held-out part of the corpus
		{src: "find ~/Documents -type f -delete", want: []string{"rm-outside:block"}},
		{src: "find / -name '*.log' -delete", want: []string{"find-delete-root:block"}},
		{src: "find build -name '*.o' -delete", want: nil},
		{src: "git checkout -- src/", ctx: dirty, want: []string{"git-discard:confirm"}},
		{src: "git checkout -- main.go", ctx: dirty, want: nil},
		{src: `python3 -c "__import__('os').system('rm -rf ~')"`, want: []string{"rm-root:block"}},
		{src: `node -e "const {execSync}=require('child_process'); execSync('rm -rf ~')"`, want: []string{"rm-root:block"}},
		{src: `lua -e 'os.execute("rm -rf ~")'`, want: []string{"rm-root:block"}},
		{src: "bash -s < /tmp/x.sh", want: []string{"opaque-shell:confirm"}},
		{src: "git -c protocol.ext.allow=always clone 'ext::sh -c rm% -rf% ~'", want: []string{"rm-root:block"}},
		{src: "LESSOPEN='|rm -rf ~ %s' less README.md", want: []string{"rm-root:block"}},
		{src: "aws logs tail /aws/lambda/x", want: nil},
	}
	for _, tt := range tests {
		ctx := tt.ctx
		if zeroContext(ctx) {
			ctx = testCtx
		}
		if diff := cmp.Diff(tt.want, rules(classify(t, tt.src, ctx))); diff != "" {
			t.Errorf("Classify(%q) (-want +got):\n%s", tt.src, diff)
		}
	}
}

// TestDirs checks Command.Dirs: the folders a command may run in.
func TestDirs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want []string // Dirs of the last command
	}{
		{"ls", nil},
		// after `cd x &&` the cd succeeded; after `cd x;` it may not have
		{"cd src && ls", []string{"src"}},
		{"cd src; ls", []string{"", "src"}},
		{"cd src || exit 1; ls", []string{"", "src"}},
		{"cd src; cd ..; ls", []string{"", "src", "..", "."}},
		{"cd /tmp && cd x && ls", []string{"/tmp/x"}},
		{"cd /tmp; cd x && ls", []string{"x", "/tmp/x"}},
		{"cd && ls", []string{"~"}},
		{"cd ~/a/.. && ls", []string{"~"}},
		{"cd ~/.. && ls", []string{"?"}},
		{"cd - && ls", []string{"?"}},
		{"(cd src) && ls", nil},
		{"(cd src); ls", nil},
		{"cd src | cat; ls", nil},
		{"bash -c 'cd src'; ls", nil},
		{"eval 'cd src'; ls", []string{"", "src"}},
		{"builtin cd src && ls", []string{"src"}},
	}
	for _, tt := range tests {
		a, err := Parse(tt.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.src, err)
		}
		last := a.Commands[len(a.Commands)-1]
		if diff := cmp.Diff(tt.want, last.Dirs); diff != "" {
			t.Errorf("%q: Dirs of %s (-want +got):\n%s", tt.src, last.Name, diff)
		}
	}
}

// TestReaderWords checks the words the reader hands the path checks: loop
// variables and known values resolved, recursive readers marked Under,
// process substitutions and mktemp names kept out of the project.
func TestReaderWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src   string
		reads bool
		want  string // JSON of Reads or Writes
	}{
		{"for f in src/*.go; do cat \"$f\"; done", true, `[{"Lit":"src/*.go","Dynamic":true,"Pattern":"src/*.go"}]`},
		{"touch x; for f in src/*.go; do cat \"$f\"; done", true, `[{"Lit":"$f","Dynamic":true,"Expands":true,"Pattern":"**"}]`},
		{"f=.env; cat $f", true, `[{"Lit":".env","Dynamic":false}]`},
		{"c='a b'; cat $c", true, `[{"Lit":"$c","Dynamic":true,"Expands":true,"Pattern":"**"}]`},
		{"grep -r TOKEN src", true, `[{"Lit":"src","Dynamic":false},{"Lit":"src/*","Dynamic":true,"Expands":true,"Pattern":"src/**","Under":"src"}]`},
		{"rg TOKEN", true, `[{"Lit":"./*","Dynamic":true,"Expands":true,"Pattern":"./**","Under":".","Visible":true}]`},
		{"find . -name '*.txt' -exec cat {} \\;", true, `[{"Lit":"{}","Dynamic":true,"Expands":true,"Pattern":"./**/*.txt","Under":".","Name":"*.txt"}]`},
		{"diff <(ls) <(ls -la)", true, `[{"Lit":"\u003c(ls)","Dynamic":true,"Expands":true,"Pattern":"/dev/fd/*"},{"Lit":"\u003c(ls -la)","Dynamic":true,"Expands":true,"Pattern":"/dev/fd/*"}]`},
		{"cd .pi && echo x > settings.json", false, `[{"Lit":".pi/settings.json","Dynamic":false}]`},
		{"cd .pi; echo x > settings.json", false, `[{"Lit":"settings.json","Dynamic":false},{"Lit":".pi/settings.json","Dynamic":false}]`},
		{"cd \"$D\" && echo x > a", false, `[{"Lit":"?/a","Dynamic":true,"Expands":true,"Pattern":"**/a"}]`},
		{"unzip -o v.zip -d vendor", false, `[{"Lit":"vendor/*","Dynamic":true,"Expands":true,"Pattern":"vendor/**","Under":"vendor"}]`},
		{"echo x > $(mktemp)", false, `[{"Lit":"$(mktemp)","Dynamic":true,"Expands":true,"Pattern":"/tmp/tmp.[a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9][a-zA-Z0-9]"}]`},
	}
	for _, tt := range tests {
		a, err := Parse(tt.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.src, err)
		}
		ws := Writes(a)
		if tt.reads {
			ws = Reads(a)
		}
		got, _ := json.Marshal(ws)
		if string(got) != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestPrintfText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		format string
		args   []string
		want   string
		ok     bool
	}{
		{`%s\n`, []string{"rm -rf ~"}, "rm -rf ~\n", true},
		{`%s %s\n`, []string{"a", "b", "c"}, "a b\nc \n", true},
		{`echo hi\n`, nil, "echo hi\n", true},
		{`100%%\n`, nil, "100%\n", true},
		{`%q\n`, []string{"x"}, "", false},
		{`\x41`, nil, "", false},
	} {
		var ws []Word
		for _, a := range tt.args {
			ws = append(ws, Word{Lit: a})
		}
		got, ok := printfText(tt.format, ws)
		if got != tt.want || ok != tt.ok {
			t.Errorf("printfText(%q, %q) = %q, %v; want %q, %v", tt.format, tt.args, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLoopAssignments: a value assigned inside a loop, or read from input,
// is not the value a use sees: those uses stay computed.
func TestLoopAssignments(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{"x=build; rm -rf $x", nil},
		{"x=build; for i in 1 2; do rm -rf $x; x=~; done", []string{"rm-root:block"}},
		{"x=build; while true; do rm -rf $x; x=/; done", []string{"rm-root:block"}},
		{"x=build; while read x; do rm -rf $x; done < list", []string{"rm-root:block"}},
		{"x=build; read x; rm -rf $x", []string{"rm-root:block"}},
		{"x=build; printf -v x '%s' ~; rm -rf $x", []string{"rm-root:block"}},
		{"x=build; mapfile -t x < list; rm -rf $x", []string{"rm-root:block"}},
		{"for f in build; do f=~; rm -rf $f; done", []string{"rm-root:block"}},
		{"for f in build; do rm -rf $f; done", nil},
		// a few literal items: the body is read once for each
		{"for d in build dist; do rm -rf \"$d\"; done", nil},
		{"for d in build ~ dist; do rm -rf \"$d\"; done", []string{"rm-root:block"}},
		{"for d in 1 2 3 4 5 6 7 8 9; do rm -rf \"$d\"; done", []string{"rm-root:block"}}, // too many: computed
	} {
		if diff := cmp.Diff(tt.want, rules(classify(t, tt.src, testCtx))); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.src, diff)
		}
	}
}
