// Package shquote is the one owner of quoting a word for a POSIX shell's
// command line. Quote is for a command a person is to run (a fix, a grant,
// a `pi install`): the shell gives the word back. Show is for a command as
// a finding shows it, written as it was (a glob, a ~, piagent's *** mask).
package shquote

import "strings"

// Quote is s as one word of a POSIX shell's command line, with the same
// value once the shell has read it: s itself when every byte is one the
// shell reads as a plain character (ASCII letters and digits and
// @%_-+=:,./), else s in single quotes (see single). The empty word is a
// pair of single quotes. A ~ is quoted (the shell would expand a leading
// one, bash one after = too), and so is every byte outside ASCII.
func Quote(s string) string {
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			return single(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

// Show is s as one word of a command shown to a person: in single quotes,
// as Quote writes them, only when it holds a byte that would split the
// word, end the command, start a quote, an expansion or a comment (space,
// tab, newline, ' " \ $ ` ; & | < > ( ) { } #). Glob characters, a ~ and
// piagent's *** mask are left as written, so the command reads as it was
// typed; the shell reads the shown word as one word, though not always
// as s. The guard reads git's ext:: command through it too, globs and ~
// as a shell would: more than git itself runs.
func Show(s string) string {
	if s == "" {
		return "''"
	}
	if strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}#") {
		return single(s)
	}
	return s
}

// single is s in single quotes, each single quote of s written as four
// bytes: a quote that ends the quoting, a backslash and a quote (the quote
// itself), and a quote that starts the quoting again.
func single(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// plain: the shell reads c as itself anywhere in a word.
func plain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@%_-+=:,./", c) >= 0
}
