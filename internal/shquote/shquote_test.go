package shquote

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"repo", "repo"},
		{"npm:@scope/pkg@1.2.3", "npm:@scope/pkg@1.2.3"},
		{"/home/u/.pi/agent", "/home/u/.pi/agent"},
		{"a,b=c+d%e", "a,b=c+d%e"},
		{"-x", "-x"},
		{"two words", "'two words'"},
		{"it's", `'it'\''s'`},
		{"'", `''\'''`},
		{"$HOME", "'$HOME'"},
		{"${TOKEN}", "'${TOKEN}'"},
		{"Authorization: Bearer ${X}", "'Authorization: Bearer ${X}'"},
		{"~/x", "'~/x'"},     // the shell would expand a bare ~
		{"a=~/x", "'a=~/x'"}, // bash expands ~ after = even in an argument
		{"*.go", "'*.go'"},
		{"a;b", "'a;b'"},
		{"a\nb", "'a\nb'"},
		{`back\slash`, `'back\slash'`},
		{"x`id`", "'x`id`'"},
		{"{a,b}", "'{a,b}'"},
		{"!x", "'!x'"},
		{"café", "'café'"},
		{"#x", "'#x'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if tc.in != "" {
			if got := parsed(t, Quote(tc.in)); got != tc.in {
				t.Errorf("the shell reads %s as %q, want %q", Quote(tc.in), got, tc.in)
			}
		}
	}
}

func TestShow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"-H", "-H"},
		{"***", "***"}, // the mask, as written
		{"https://***@api.example.com/x?***", "https://***@api.example.com/x?***"},
		{"--token=***", "--token=***"},
		{"~/.ssh/id_rsa", "~/.ssh/id_rsa"},
		{"*.go", "*.go"},
		{"café", "café"},
		{"two words", "'two words'"},
		{"it's", `'it'\''s'`},
		{"$HOME/x", "'$HOME/x'"},
		{"a;b", "'a;b'"},
		{"#x", "'#x'"},
		{"{a,b}", "'{a,b}'"},
	} {
		if got := Show(tc.in); got != tc.want {
			t.Errorf("Show(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// parsed is the value of the one word of line "echo WORD" as a POSIX shell
// (mvdan.cc/sh's parser, then its expansion: tildes, quote removal) reads
// it.
func parsed(t *testing.T, word string) string {
	t.Helper()
	return expanded(t, oneWord(t, word))
}

// oneWord is the one argument of "echo WORD", parsed as a POSIX shell
// would.
func oneWord(t *testing.T, word string) *syntax.Word {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader("echo "+word), "")
	if err != nil {
		t.Fatalf("echo %s: %v", word, err)
	}
	if len(f.Stmts) != 1 {
		t.Fatalf("echo %s: %d statements", word, len(f.Stmts))
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 2 || len(call.Assigns) != 0 {
		t.Fatalf("echo %s: not one command of two words", word)
	}
	return call.Args[1]
}

// expanded is the value of w, a word of literal parts only.
func expanded(t *testing.T, w *syntax.Word) string {
	t.Helper()
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			t.Fatalf("a part %T the shell expands", p)
		}
	}
	// Fields expands a bare ~ to HOME and removes quotes; with no ReadDir
	// it globs nothing (the table holds the glob characters).
	got, err := expand.Fields(&expand.Config{Env: expand.ListEnviron("HOME=/home/h")}, w)
	if err != nil || len(got) != 1 {
		t.Fatalf("%q, %v", got, err)
	}
	return got[0]
}

// TestQuoteCarriageReturn: a carriage return is kept inside the quotes, as
// /bin/sh reads them (mvdan.cc/sh's parser drops one before a newline, so
// FuzzQuote leaves it to this test and the real shell).
func TestQuoteCarriageReturn(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	for _, s := range []string{"\r", "\r\n", "a\r\nb'\r", "\n\r"} {
		out, err := exec.Command(sh, "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("sh -c printf %%s %s: %v", Quote(s), err)
		}
		if string(out) != s {
			t.Errorf("sh reads Quote(%q) = %s as %q", s, Quote(s), out)
		}
	}
}

// FuzzQuote: every word a command line can carry (no NUL byte, valid
// UTF-8), quoted, is read back by the shell as itself. A carriage return
// is left to TestQuoteCarriageReturn.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"a", "it's", "~", "a b", "$(id)", "\\", "'''", "\n", "x=~", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || strings.ContainsAny(s, "\x00\r") || !utf8.ValidString(s) {
			return
		}
		if got := parsed(t, Quote(s)); got != s {
			t.Fatalf("Quote(%q) = %s, read back as %q", s, Quote(s), got)
		}
	})
}

// FuzzShow: a shown word is one word of the command line; quoted, it is
// Quote's quoting and the shell reads it back as itself. A bare carriage
// return is left out: a POSIX shell reads it as part of the word, and
// mvdan.cc/sh's parser as a blank.
func FuzzShow(f *testing.F) {
	for _, s := range []string{"***", "it's", "~/x", "a b", "$(id)", "*.go", "x#y", "#x", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || strings.ContainsAny(s, "\x00\r") || !utf8.ValidString(s) {
			return
		}
		shown := Show(s)
		w := oneWord(t, shown)
		if shown != s {
			if shown != Quote(s) {
				t.Fatalf("Show(%q) = %s, Quote gives %s", s, shown, Quote(s))
			}
			if got := expanded(t, w); got != s {
				t.Fatalf("Show(%q) = %s, read back as %q", s, shown, got)
			}
		}
	})
}
