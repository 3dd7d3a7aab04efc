package gitnest

import (
	"slices"
	"strings"
)

// allowed are the settings a nested repository's config may hold: what
// git init, git clone and git submodule write. Keys are section.name, or
// section.*.name for a section with a subsection, lower case.
var allowed = map[string]bool{
	"core.repositoryformatversion": true,
	"core.filemode":                true,
	"core.bare":                    true,
	"core.logallrefupdates":        true,
	"core.ignorecase":              true,
	"core.precomposeunicode":       true,
	"core.symlinks":                true,
	"core.worktree":                true,
	"core.autocrlf":                true,
	"remote.*.url":                 true,
	"remote.*.fetch":               true,
	"remote.*.pushurl":             true,
	"branch.*.remote":              true,
	"branch.*.merge":               true,
	"branch.*.rebase":              true,
	"user.name":                    true,
	"user.email":                   true,
	"extensions.objectformat":      true,
	"submodule.*.url":              true,
	"submodule.*.active":           true,
	"init.defaultbranch":           true,
}

// ConfigRisk reports the first setting of a git config file's text that is
// not on the allow-list (an include among them), or a line it cannot read
// as git would. It reads conservatively: a continued value's next line is
// read as a setting of its own, so it can only find more.
func ConfigRisk(text []byte) (string, bool) {
	for _, s := range settings(text) {
		if s.bad != "" {
			return s.bad, true
		}
		if !allowed[s.pattern] {
			return s.key, true
		}
	}
	return "", false
}

type setting struct {
	key     string // section[.subsection].name as written, name lower case
	pattern string // section.name or section.*.name, lower case
	value   string
	bad     string // a line that is not a setting: why
}

// settings reads a git config file's settings, one per line.
func settings(text []byte) []setting {
	var out []setting
	section, sub, hasSub := "", "", false
	for line := range strings.Lines(string(text)) {
		line = strings.TrimLeft(line, " \t")
		for line != "" {
			switch line[0] {
			case '#', ';', '\n', '\r':
				line = ""
				continue
			}
			if line[0] == '[' {
				end := headerEnd(line)
				if end < 0 {
					out = append(out, setting{bad: "an unreadable section header"})
					line = ""
					continue
				}
				section, sub, hasSub = header(line[1:end])
				// a setting may follow on the same line
				line = strings.TrimLeft(line[end+1:], " \t")
				continue
			}
			i := 0
			for i < len(line) && (isAlnum(line[i]) || line[i] == '-') {
				i++
			}
			if i == 0 {
				out = append(out, setting{bad: "an unreadable line"})
				line = ""
				continue
			}
			name := strings.ToLower(line[:i])
			value := ""
			if rest := strings.TrimLeft(line[i:], " \t"); strings.HasPrefix(rest, "=") {
				value = strings.TrimSpace(rest[1:])
			}
			s := setting{value: value}
			if section == "" {
				s.bad = "a setting outside any section"
			} else if hasSub {
				s.key, s.pattern = section+"."+sub+"."+name, section+".*."+name
			} else {
				s.key, s.pattern = section+"."+name, section+"."+name
			}
			out = append(out, s)
			line = ""
		}
	}
	return out
}

// headerEnd is the index of the ']' ending a section header at line[0],
// quotes and escapes in a subsection followed; -1 if there is none.
func headerEnd(line string) int {
	quoted := false
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ']' && !quoted:
			return i
		case c == '\n':
			return -1
		}
	}
	return -1
}

// header reads "section", "section.sub" or `section "sub"`: the section's
// name lower case, and its subsection.
func header(h string) (section, sub string, hasSub bool) {
	h = strings.TrimSpace(h)
	if name, rest, ok := strings.Cut(h, " "); ok {
		rest = strings.TrimSpace(rest)
		rest = strings.TrimSuffix(strings.TrimPrefix(rest, `"`), `"`)
		return strings.ToLower(name), rest, true
	}
	if name, rest, ok := strings.Cut(h, "."); ok {
		return strings.ToLower(name), strings.ToLower(rest), true
	}
	return strings.ToLower(h), "", false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// HooksPaths are the values of core.hooksPath in a git config file's text,
// as git reads them (quotes and escapes removed, a comment cut), in order:
// git runs the last one's hooks instead of those in the git folder.
func HooksPaths(text []byte) []string { return values(text, "core.hookspath") }

// HookCommands are the values of hook.<name>.command in a git config
// file's text (git 2.54 and later run them as hooks, beside the hooks
// folder's), as git reads them.
func HookCommands(text []byte) []string { return values(text, "hook.*.command") }

// Includes are the files a git config file's text includes, [include]'s
// and [includeIf "…"]'s path values as git reads them, in order: git reads
// each as config of its own where its condition holds (a missing one is
// passed over).
func Includes(text []byte) []string { return values(text, "include.path", "includeif.*.path") }

// values are the values of the settings of text whose pattern (the key
// lower case, a subsection as "*") is one of patterns, as git reads them
// (quotes and escapes removed, a comment cut), in order; empty ones left
// out.
func values(text []byte, patterns ...string) []string {
	var out []string
	for _, s := range bothReadings(text) {
		if slices.Contains(patterns, s.pattern) {
			if v := configValue(s.value); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// bothReadings are the settings of text read line by line and, after
// them, those of text with each value continued on the next line joined
// (a backslash ending a line: git reads "path = ../sha\" and "red.gitconfig"
// as one value). Both are kept: a backslash ending a comment continues
// nothing in git, and the joined reading would lose the setting after it.
func bothReadings(text []byte) []setting {
	out := settings(text)
	if j := joinContinued(string(text)); j != string(text) {
		out = append(out, settings([]byte(j))...)
	}
	return out
}

// joinContinued removes each backslash-newline whose backslash is not
// itself escaped.
func joinContinued(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] == '\\' {
			n := 0
			for i+n < len(text) && text[i+n] == '\\' {
				n++
			}
			b.WriteString(text[i : i+n-n%2])
			i += n - 1
			if n%2 == 1 {
				rest := text[i+1:]
				switch {
				case strings.HasPrefix(rest, "\n"):
					i++
				case strings.HasPrefix(rest, "\r\n"):
					i += 2
				default:
					b.WriteByte('\\')
				}
			}
			continue
		}
		b.WriteByte(text[i])
	}
	return b.String()
}

// configValue is a setting's raw text after its "=" as git reads it: a
// '#' or ';' outside quotes starts a comment, quotes are removed, \n \t \b
// \\ and \" are what they name, and blanks at the end outside quotes go.
func configValue(raw string) string {
	var b strings.Builder
	quoted, keep := false, 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			quoted = !quoted
			keep = b.Len()
		case c == '\\' && i+1 < len(raw):
			i++
			switch raw[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				b.WriteByte(raw[i])
			}
			keep = b.Len()
		case (c == '#' || c == ';') && !quoted:
			return b.String()[:keep]
		case (c == ' ' || c == '\t') && !quoted:
			b.WriteByte(c)
		default:
			b.WriteByte(c)
			keep = b.Len()
		}
	}
	return b.String()[:keep]
}
