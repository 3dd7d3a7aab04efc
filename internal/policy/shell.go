package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/shell"
)

// shellOutcome is what shell analysis concluded about one command string.
type shellOutcome struct {
	block    *Decision
	intent   intent
	confirms []Decision
	ships    bool // a confirmation that is not about the project itself
}

// readOnlyCommands run without changing anything (their file arguments are
// checked as reads). A command not listed counts as a source write.
var readOnlyCommands = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "grep": true, "egrep": true,
	"fgrep": true, "rg": true, "ag": true, "ls": true, "tree": true, "wc": true, "pwd": true,
	"echo": true, "printf": true, "which": true, "type": true, "whereis": true, "file": true,
	"stat": true, "du": true, "df": true, "diff": true, "cmp": true, "sort": true, "uniq": true,
	"cut": true, "tr": true, "jq": true, "date": true, "true": true, "false": true, "test": true,
	"[": true, "basename": true, "dirname": true, "realpath": true, "readlink": true, "id": true,
	"whoami": true, "uname": true, "hostname": true, "cd": true, "nl": true, "column": true,
	"sha256sum": true, "md5sum": true, "shasum": true, "xxd": true, "od": true, "hexdump": true,
	"find": true, "fd": true, "sed": true, "awk": true,
}

// readOnlyGit are git subcommands that only read.
var readOnlyGit = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "rev-parse": true, "ls-files": true,
	"blame": true, "grep": true, "describe": true, "shortlog": true, "cat-file": true, "ls-tree": true,
	"reflog": true, "whatchanged": true, "merge-base": true, "name-rev": true,
}

// analyseShell parses a command string with the shell parser and applies
// the shell rules, the policy's exec rules and the protected paths to every
// command in it.
func (p *Policy) analyseShell(src, field string, f *Facts, hs []string) shellOutcome {
	a, err := shParse(src)
	if err != nil {
		return shellOutcome{block: &Decision{Action: ActionBlock, Code: CodeShellParse, Subject: field,
			Reason: fmt.Sprintf("piagent cannot parse the shell command, so it is blocked: %v", err)}}
	}
	var out shellOutcome
	for _, fd := range shClassify(a, shContext{Home: f.Home, Cwd: f.Cwd, ProjectRoot: f.ProjectRoot, Dirty: f.Dirty, DirtyProbe: f.DirtyProbe}) {
		action := p.ruleAction(fd.Rule, fd.Action)
		d := Decision{Action: action, Code: CodeShellRule, Rule: fd.Rule, Subject: fd.Command, Reason: fd.Detail}
		switch action {
		case ActionBlock:
			if d.Reason == "" {
				d.Reason = fmt.Sprintf("shell rule %s blocks %q", fd.Rule, fd.Command)
			}
			return shellOutcome{block: &d}
		case ActionConfirm:
			if d.Reason == "" {
				d.Reason = fmt.Sprintf("shell rule %s: %q needs a person's confirmation", fd.Rule, fd.Command)
			}
			out.confirms = append(out.confirms, d)
			// a rule the user or project made confirm ships, whatever it was
			out.ships = out.ships || !fd.Local || fd.Action != ActionConfirm
		}
	}
	cmds := a.Commands
	for _, r := range p.execRules {
		for _, c := range cmds {
			if !execRuleMatches(r.ExecRule, c) {
				continue
			}
			subj := wordsText(c.Argv)
			reason := r.Reason
			if reason == "" {
				reason = fmt.Sprintf("exec rule %s (%s policy)", r.ID, r.layer)
			}
			d := Decision{Action: r.Action, Code: CodeExecRule, Rule: r.ID, Subject: subj, Reason: reason}
			if r.Action == ActionBlock {
				return shellOutcome{block: &d}
			}
			out.confirms = append(out.confirms, d)
			out.ships = true
		}
	}
	// The reader gives each relative path as seen from every folder its
	// command may run in (the cd, pushd and popd before it); after a cd
	// whose target is not literal, a relative path could be anywhere, and
	// is blocked.
	var writes []shWord
	for i := range cmds {
		for _, pass := range [2]bool{true, false} {
			words := a.ReadsAt(i)
			if !pass {
				words = a.WritesAt(i)
				writes = append(writes, words...)
			}
			for _, w := range words {
				if d, ok := p.shellPathBlock(w, f, hs, pass); ok {
					return shellOutcome{block: &d}
				}
			}
		}
	}

	if f.HardLinks != nil {
		for i, c := range cmds {
			switch path.Base(c.Name) {
			case "rm", "unlink", "mv", "ln", "link", "trash", "trash-put", "rmdir":
				continue // a name removed or replaced: the file's other names keep it
			}
			for _, w := range a.WritesAt(i) {
				if w.Dynamic || strings.HasPrefix(w.Lit, "?/") {
					continue
				}
				if d, ok := p.hardLinkBlock("the shell command", w.Lit, f, false); ok {
					d.Code = CodeShellProtectedWrite
					return shellOutcome{block: &d}
				}
			}
		}
	}
	if d, ok := p.startupTreeBlock(a, f, hs); ok {
		return shellOutcome{block: &d}
	}
	if d, ok := p.procWriteBlock(a, f, hs); ok {
		return shellOutcome{block: &d}
	}
	if d, ok := goEnvElsewhere(a); ok {
		return shellOutcome{block: &d}
	}
	if d, ok := p.unseenByReader(a, f, hs); ok {
		return shellOutcome{block: &d}
	}

	// The intent.
	in := intentRead
	for _, c := range cmds {
		if !readOnlyCommand(c) {
			in = intentSource
		}
	}
	for _, w := range writes {
		if w.Dynamic || !p.isDocsPath(resolvePath(w.Lit, f).clean, f) {
			in = intentSource
		} else {
			in = max(in, intentDocs)
		}
	}
	if out.ships {
		in = intentShip
	}
	out.intent = in
	return out
}

// ruleAction applies execRuleActions to a shell rule's action: the user's
// choice replaces it, a project's can only make it stricter.
func (p *Policy) ruleAction(rule, action string) string {
	o, ok := p.ruleActions[rule]
	if !ok {
		return action
	}
	if o.floor {
		if actionRank(o.action) > actionRank(action) {
			return o.action
		}
		return action
	}
	return o.action
}

func readOnlyCommand(c shCommand) bool {
	name := path.Base(c.Name)
	switch name {
	case "git":
		for _, w := range c.Argv[1:] {
			if w.Dynamic {
				return false
			}
			if strings.HasPrefix(w.Lit, "-") {
				continue
			}
			return readOnlyGit[w.Lit]
		}
		return false
	case "sed":
		for _, w := range c.Argv[1:] {
			if w.Dynamic || strings.HasPrefix(w.Lit, "-i") || w.Lit == "--in-place" || strings.HasPrefix(w.Lit, "--in-place=") {
				return false
			}
		}
		return true
	case "find":
		for _, w := range c.Argv[1:] {
			switch w.Lit {
			case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		}
		return true
	case "awk":
		for _, w := range c.Argv[1:] {
			if strings.Contains(w.Lit, "system") || strings.Contains(w.Lit, ">") || strings.Contains(w.Lit, "|") {
				return false
			}
		}
		return true
	}
	return readOnlyCommands[name]
}

func execRuleMatches(r ExecRule, c shCommand) bool {
	if path.Base(c.Name) != r.Command && c.Name != r.Command {
		return false
	}
	i := 0
	for _, w := range c.Argv[1:] {
		if i < len(r.Args) && !w.Dynamic && w.Lit == r.Args[i] {
			i++
		}
	}
	return i == len(r.Args)
}

func wordsText(ws []shWord) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Lit
	}
	return strings.Join(parts, " ")
}

// shellPathBlock checks one path a shell command reads or writes, as the
// reader gave it from one of the folders its command may run in. A literal
// path is matched like a tool's path; a dynamic one (a glob, a variable) is
// blocked when it can reach a protected path; a relative path after a cd
// whose target is not literal ("?/…") is blocked.
func (p *Policy) shellPathBlock(w shWord, f *Facts, hs []string, read bool) (Decision, bool) {
	if w.Dynamic && w.Pattern == "/dev/fd/*" {
		return Decision{}, false // a process substitution's pipe
	}
	if rel, ok := strings.CutPrefix(w.Lit, "?/"); ok {
		return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: rel,
			Reason: fmt.Sprintf("the shell command uses the relative path %q after a cd whose target is not literal, so piagent cannot tell whether it is protected; use an absolute or literal path", rel)}, true
	}
	code, verb := CodeShellProtectedWrite, "writes"
	if read {
		code, verb = CodeShellProtectedRead, "reads"
	}
	if !w.Dynamic {
		for _, v := range variants(w.Lit, "") {
			if pat, ok := p.protectedHit(v, f, hs, read, true); ok {
				return Decision{Action: ActionBlock, Code: code, Rule: pat, Subject: w.Lit,
					Reason: fmt.Sprintf("the shell command %s %q, a protected path (rule %q), so it is blocked like the read and write tools", verb, w.Lit, pat)}, true
			}
		}
		return Decision{}, false
	}
	if !w.Expands && f.Glob != nil && !strings.Contains(w.Pattern, "**") && w.Pattern != "" {
		// A glob only: expand it where it will run, and judge what it names.
		pat := w.Pattern
		switch {
		case pat == "~" || strings.HasPrefix(pat, "~/"):
			pat = escapeGlob(f.Home) + pat[1:]
		case !strings.HasPrefix(pat, "/"):
			pat = escapeGlob(strings.TrimSuffix(f.Cwd, "/")) + "/" + pat
		}
		if matches, ok := f.Glob(pat); ok {
			for _, m := range matches {
				if rule, hit := p.protectedHit(m, f, hs, read, true); hit {
					return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Rule: rule, Subject: w.Lit,
						Reason: fmt.Sprintf("the shell command %s %q, a glob that matches a protected path (rule %q); name the files literally", verb, w.Lit, rule)}, true
				}
			}
			return Decision{}, false
		}
	}
	if w.Under != "" && f.Tree != nil {
		// Files below a folder: judge the ones there.
		dir := w.Under
		switch {
		case dir == "~" || strings.HasPrefix(dir, "~/"):
			dir = f.Home + dir[1:]
		case !strings.HasPrefix(dir, "/"):
			dir = strings.TrimSuffix(f.Cwd, "/") + "/" + dir
		}
		if found, ok := f.Tree(path.Clean(dir), w.Name, w.Visible); ok {
			for _, m := range found {
				if rule, hit := p.protectedHit(m, f, hs, read, true); hit {
					return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Rule: rule, Subject: w.Under,
						Reason: fmt.Sprintf("the shell command %s the files below %q, and %s is a protected path (rule %q); name the files literally or leave it out", verb, w.Under, m, rule)}, true
				}
			}
			return Decision{}, false
		}
	}
	if pat, ok := p.dynamicReach(w, f, hs); ok {
		return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Rule: pat, Subject: w.Lit,
			Reason: fmt.Sprintf("the shell command %s %q, a glob or expansion that can reach a protected path (rule %q); name the files literally", verb, w.Lit, pat)}, true
	}
	return Decision{}, false
}

// dynamicReach reports whether a word with globs or expansions can name a
// path some protected pattern matches. It works on the word's Pattern: an
// expansion ("**") can hold anything, "/" included; a glob follows the
// shell's rule that a leading wildcard does not match a leading dot.
func (p *Policy) dynamicReach(w shWord, f *Facts, hs []string) (string, bool) {
	for _, g := range dynamicGlobs(w, f) {
		for _, set := range [2][]entry{p.protected, p.shellProtected} {
			for i := range set {
				for j := range set[i].globs {
					if globsIntersect(g, set[i].globs[j].absSegs(hs), true) {
						return set[i].pattern, true
					}
				}
			}
		}
	}
	return "", false
}

// ptok is one item of a shell pattern.
type ptok struct {
	t     tok
	dstar bool // "**": anything, "/" included
	slash bool
}

// lexPattern reads a shell word's Pattern: "\" escapes, "*", "**", "?",
// "[…]" and "/".
func lexPattern(s string) []ptok {
	var out []ptok
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' && i+1 < len(s):
			r2, m := utf8.DecodeRuneInString(s[i+1:])
			out = append(out, ptok{t: tok{kind: tLit, r: unicode.ToLower(r2)}})
			i += 1 + m
		case r == '*' && i+1 < len(s) && s[i+1] == '*':
			out = append(out, ptok{dstar: true})
			i += 2
			for i < len(s) && s[i] == '*' {
				i++
			}
		case r == '*':
			out = append(out, ptok{t: tok{kind: tStar}})
			i += n
		case r == '?':
			out = append(out, ptok{t: tok{kind: tAny}})
			i += n
		case r == '[':
			t, w, err := parseClass(strings.ToLower(s[i:]))
			if err != nil {
				out = append(out, ptok{t: tok{kind: tLit, r: '['}})
				i += n
				continue
			}
			out = append(out, ptok{t: t})
			i += w
		case r == '/':
			out = append(out, ptok{slash: true})
			i += n
		default:
			out = append(out, ptok{t: tok{kind: tLit, r: unicode.ToLower(r)}})
			i += n
		}
	}
	return out
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]{}`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// dynamicGlobs turns a dynamic shell word into absolute segment lists that
// together match every path the word can name.
func dynamicGlobs(w shWord, f *Facts) [][]gseg {
	pat := w.Pattern
	if pat == "" {
		pat = strings.ReplaceAll(markExpansions(w.Lit), string(varMark), "**")
	}
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		pat = escapeGlob(f.Home) + pat[1:]
	case pat == `\~` || strings.HasPrefix(pat, `\~/`):
		pat = escapeGlob(f.Home) + pat[2:]
	}
	if !strings.HasPrefix(pat, "/") && !strings.HasPrefix(pat, "**") {
		pat = escapeGlob(strings.TrimSuffix(f.Cwd, "/")) + "/" + pat
	}
	// Split into segments; a segment holding "**" next to other text is
	// either one segment or a run of segments.
	var segLists [][]ptok
	var cur []ptok
	for _, t := range lexPattern(pat) {
		if t.slash {
			segLists = append(segLists, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	segLists = append(segLists, cur)
	results := [][]gseg{nil}
	for _, sl := range segLists {
		alts := segAlternatives(sl)
		if alts == nil {
			continue
		}
		if len(results)*len(alts) > 64 {
			alts = [][]gseg{{{dstar: true}}} // too many: anything
		}
		var next [][]gseg
		for _, r := range results {
			for _, a := range alts {
				next = append(next, append(slices.Clip(r), a...))
			}
		}
		results = next
	}
	for i, r := range results {
		results[i] = cleanSegs(r)
	}
	return results
}

// segAlternatives returns the ways one pattern segment can be matched; nil
// for an empty or "." segment.
func segAlternatives(sl []ptok) [][]gseg {
	if len(sl) == 0 || len(sl) == 1 && !sl[0].dstar && sl[0].t.kind == tLit && sl[0].t.r == '.' {
		return nil
	}
	if len(sl) == 2 && sl[0].t.kind == tLit && sl[0].t.r == '.' && sl[1].t.kind == tLit && sl[1].t.r == '.' && !sl[0].dstar && !sl[1].dstar {
		return [][]gseg{{{lit: ".."}}}
	}
	di := slices.IndexFunc(sl, func(t ptok) bool { return t.dstar })
	if di < 0 {
		return [][]gseg{{toSeg(sl, false)}}
	}
	if len(sl) == 1 {
		return [][]gseg{{{dstar: true}}}
	}
	// "A**B": A* then anything then *B (B may hold further "**", treated as
	// "*" within the last segment), or all of it in one segment.
	flat := make([]ptok, 0, len(sl))
	for _, t := range sl {
		if t.dstar {
			t = ptok{t: tok{kind: tStar}}
		}
		flat = append(flat, t)
	}
	one := toSeg(flat, true)
	var run []gseg
	if di > 0 {
		run = append(run, toSeg(append(slices.Clone(sl[:di]), ptok{t: tok{kind: tStar}}), false))
	}
	run = append(run, gseg{dstar: true})
	if rest := flat[di+1:]; len(rest) > 0 {
		run = append(run, toSeg(append([]ptok{{t: tok{kind: tStar}}}, rest...), true))
	}
	return [][]gseg{{one}, run}
}

func toSeg(sl []ptok, fromVar bool) gseg {
	toks := make([]tok, 0, len(sl))
	wild := false
	for _, t := range sl {
		if t.t.kind != tLit {
			wild = true
		}
		if t.t.kind == tStar && len(toks) > 0 && toks[len(toks)-1].kind == tStar {
			continue
		}
		toks = append(toks, t.t)
	}
	if !wild {
		var b strings.Builder
		for _, t := range toks {
			b.WriteRune(t.r)
		}
		return gseg{lit: b.String()}
	}
	return gseg{toks: toks, fromVar: fromVar}
}

// cleanSegs applies ".." lexically (a ".." after "**" stays covered by the
// "**") and merges runs of "**".
func cleanSegs(in []gseg) []gseg {
	var out []gseg
	for _, s := range in {
		switch {
		case !s.dstar && s.toks == nil && s.lit == "..":
			if n := len(out); n > 0 && !out[n-1].dstar {
				out = out[:n-1]
			}
		case s.dstar:
			if n := len(out); n == 0 || !out[n-1].dstar {
				out = append(out, s)
			}
		default:
			out = append(out, s)
		}
	}
	return out
}

const varMark = '\x00'

// markExpansions replaces $NAME, ${…}, $(…) and `…` with varMark.
func markExpansions(s string) string {
	if !strings.ContainsAny(s, "$`") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			b.WriteByte(varMark)
			if j < 0 {
				return b.String()
			}
			i += j + 1
		case c == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '('):
			open, close := s[i+1], byte('}')
			if open == '(' {
				close = ')'
			}
			depth := 0
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == open {
					depth++
				} else if s[j] == close {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			b.WriteByte(varMark)
			i = j
		case c == '$' && i+1 < len(s) && (isNameByte(s[i+1]) || strings.IndexByte("@*#?$!-0123456789", s[i+1]) >= 0):
			j := i + 1
			if isNameByte(s[j]) && !(s[j] >= '0' && s[j] <= '9') {
				for j < len(s) && isNameByte(s[j]) {
					j++
				}
			} else {
				j++
			}
			b.WriteByte(varMark)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// startupTreeBlock stops a command that creates, replaces, moves or removes
// a folder at or above a start-up file (a path protected and readable only,
// under the home): the file a copy or link into a folder creates
// (DEST/<base of the source>), and a folder moved or copied over ~/.local,
// ~/.gradle or ~/.config/go, which holds the files the next shell, build or
// login runs, whether they exist yet or not.
func (p *Policy) startupTreeBlock(a *shell.Analysis, f *Facts, hs []string) (Decision, bool) {
	// A link made on this line to a start-up file or a folder above one:
	// the line's later writes through it (ln -s ~ h && echo > h/.bashrc)
	// are judged before the link exists, and a later call's write races
	// the link's swap.
	for _, w := range shell.Links(a) {
		lit := w.Lit
		if w.Dynamic {
			lit = literalDir(lit)
			if lit == "" {
				return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: w.Lit,
					Reason: fmt.Sprintf("the shell command links to %q, which piagent cannot resolve before it runs; a link to a start-up file or a folder above one would let a write reach it", w.Lit)}, true
			}
		}
		if pat, ok := p.startupAt(lit, f, hs); ok {
			return Decision{Action: ActionBlock, Code: CodeShellProtectedWrite, Rule: pat, Subject: w.Lit,
				Reason: fmt.Sprintf("the shell command links to %q, at or above a path tools may read but not write (rule %q); a write through the link would reach it", w.Lit, pat)}, true
		}
	}
	for _, w := range shell.Trees(a) {
		lit := w.Lit
		if w.Dynamic {
			lit = literalDir(lit)
		}
		if lit == "" || strings.HasPrefix(lit, "?") {
			continue
		}
		if pat, ok := p.startupAt(lit, f, hs); ok {
			return Decision{Action: ActionBlock, Code: CodeShellProtectedWrite, Rule: pat, Subject: w.Lit,
				Reason: fmt.Sprintf("the shell command creates, replaces, moves or removes %q, at or above a path tools may read but not write (rule %q); piagent keeps what runs later, unconfined, as it is", w.Lit, pat)}, true
		}
	}
	return Decision{}, false
}

// startupAt is the start-up pattern the path string s, in any of its forms
// (as written, cleaned, links resolved), is at or above.
func (p *Policy) startupAt(s string, f *Facts, hs []string) (string, bool) {
	r := resolvePath(s, f)
	for _, form := range [3]string{r.clean, r.raw, r.real} {
		if form == "" {
			continue
		}
		if pat, ok := p.holdsStartup(splitPath(strings.ToLower(form)), hs); ok {
			return pat, true
		}
	}
	return "", false
}

// holdsStartup reports the start-up pattern (protected, readable only,
// anchored at the home or the root) that a path is, or lies above.
func (p *Policy) holdsStartup(segs, hs []string) (string, bool) {
	for i := range p.allowRead {
		e := &p.allowRead[i]
		if firstMatchPattern(p.protected, e.pattern) == "" {
			continue // lifted by the person's policy
		}
		for j := range e.globs {
			g := &e.globs[j]
			if g.anchor == anyDepth {
				continue
			}
			if ancestorOf(segs, g.absSegs(hs)) {
				return e.pattern, true
			}
		}
	}
	return "", false
}

func firstMatchPattern(set []entry, pattern string) string {
	for i := range set {
		if set[i].pattern == pattern {
			return pattern
		}
	}
	return ""
}

// ancestorOf reports whether the concrete segments are a path some match
// of the glob segments lies at or below.
func ancestorOf(segs []string, pat []gseg) bool {
	for i, s := range segs {
		if i >= len(pat) {
			return false
		}
		if pat[i].dstar {
			return true
		}
		if !segMatch(pat[i], s) {
			return false
		}
	}
	return true
}

// procWriteBlock stops the writes whose file the policy cannot know from the
// path: /proc/self, /proc/thread-self and /dev/fd are the writing process's
// own (its cwd, its root, its descriptors), not the helper's; a path below
// a descriptor or a cwd there names a file in whatever folder it holds; and
// /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/*/fd/N open
// the descriptor's file again, for writing, so a start-up file the command
// opened for reading (cmd 3< ~/.bashrc) would be written through them.
func (p *Policy) procWriteBlock(a *shell.Analysis, f *Facts, hs []string) (Decision, bool) {
	// Only the shell's own redirections put a file on a descriptor of the
	// process that writes: cat ~/.bashrc > /dev/stdout is a read.
	readsGuarded := false
	for _, c := range a.Commands {
		for _, r := range c.Redirects {
			switch r.Op {
			case "<", "<>", "<&":
			default:
				continue
			}
			for _, dir := range orStartDirs(c.Dirs) {
				w := r.Target
				if dir != "" && !w.Dynamic && !strings.HasPrefix(w.Lit, "/") && !strings.HasPrefix(w.Lit, "~") {
					w.Lit = dir + "/" + w.Lit
				}
				if _, hit := p.shellPathBlock(w, f, hs, false); hit {
					readsGuarded = true // a path the command could not write
				}
			}
		}
	}
	for _, w := range shell.Writes(a) {
		lit := w.Lit
		if w.Dynamic {
			lit = literalDir(lit) + "x/x"
		}
		r := resolvePath(lit, f)
		for _, form := range [2]string{r.clean, r.raw} {
			kind := procKind(strings.ToLower(form))
			if kind == procNone || kind == procFD && !readsGuarded {
				continue
			}
			why := "a path below a process's descriptor or folder, which names a file the policy cannot see"
			if kind == procFD {
				why = "a descriptor's file opened again for writing, and the command reads a protected path"
			}
			return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: w.Lit,
				Reason: fmt.Sprintf("the shell command writes %q, %s; write the file by its own name", w.Lit, why)}, true
		}
	}
	return Decision{}, false
}

type procPath int

const (
	procNone  procPath = iota
	procFD             // a descriptor itself: /dev/stdout, /dev/fd/1, /proc/self/fd/1
	procBelow          // below a process's descriptor, cwd, root or anything else of /proc
)

func procKind(p string) procPath {
	switch p {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return procFD
	}
	segs := splitPath(p)
	if len(segs) == 0 {
		return procNone
	}
	switch {
	case segs[0] == "dev" && len(segs) >= 2 && segs[1] == "fd":
		if len(segs) == 3 {
			return procFD
		}
		return procBelow
	case segs[0] == "proc":
		if len(segs) == 4 && segs[2] == "fd" {
			return procFD
		}
		return procBelow
	}
	return procNone
}

// goEnvElsewhere stops `go env -w` on a line that sets GOENV: go then
// writes NAME=VALUE lines into the file GOENV names, which may be the
// person's ~/.bashrc ($(…) in a value runs at the next shell).
func goEnvElsewhere(a *shell.Analysis) (Decision, bool) {
	setsGoenv := false
	for _, as := range a.Assignments {
		if as.Name == "GOENV" {
			setsGoenv = true
		}
	}
	if !setsGoenv {
		return Decision{}, false
	}
	for i := range a.Commands {
		for _, w := range a.WritesAt(i) {
			if w.Lit == shell.GoEnvFile {
				return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: "GOENV",
					Reason: "the shell command sets GOENV and runs go env -w or -u, which writes the file GOENV names; piagent cannot tell whether that is a start-up file"}, true
			}
		}
	}
	return Decision{}, false
}

// unseenByReader stops what makes the shell run or write something other
// than the words the reader reads: an alias with expand_aliases on (the
// alias's text, a redirection included, is the command), and GIT_WORK_TREE
// (git checkout writes the work tree it names, ~ included).
func (p *Policy) unseenByReader(a *shell.Analysis, f *Facts, hs []string) (Decision, bool) {
	aliases, expand := false, false
	for _, c := range a.Commands {
		if d, ok := runsElsewhere(c); ok {
			return d, true
		}
		switch path.Base(c.Name) {
		case "alias":
			aliases = aliases || len(c.Argv) > 1
		case "shopt":
			for _, w := range c.Argv[1:] {
				if w.Dynamic || w.Lit == "expand_aliases" {
					expand = true
				}
			}
		}
	}
	if aliases && expand {
		return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: "alias",
			Reason: "the shell command turns on expand_aliases and defines an alias: the alias's text (a redirection included) becomes the command, which piagent does not read; write the command out"}, true
	}
	git, copies := false, false
	for _, c := range a.Commands {
		switch path.Base(c.Name) {
		case "git":
			git = true
		case "cp", "mv", "ln", "install", "link":
			copies = true
		}
	}
	for _, as := range a.Assignments {
		if copies && (as.Name == "SIMPLE_BACKUP_SUFFIX" || as.Name == "VERSION_CONTROL") {
			return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: as.Name,
				Reason: fmt.Sprintf("the shell command sets %s and copies, moves or links: a backup's name (DEST<suffix>) may be a start-up file; give the suffix with -S", as.Name)}, true
		}
	}
	for _, as := range a.Assignments {
		if !git || as.Name != "GIT_WORK_TREE" && as.Name != "GIT_DIR" && as.Name != "GIT_CONFIG_PARAMETERS" && as.Name != "GIT_CONFIG_COUNT" {
			continue
		}
		v := as.Value
		if as.Name != "GIT_WORK_TREE" || v.Dynamic || v.Lit == "" {
			// another repository's core.worktree, or one given in the
			// environment, may be any folder
			return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: as.Name,
				Reason: fmt.Sprintf("the shell command sets %s for git, whose work tree (what checkout and reset write) piagent then cannot tell", as.Name)}, true
		}
		if pat, ok := p.startupAt(v.Lit, f, hs); ok {
			return Decision{Action: ActionBlock, Code: CodeShellProtectedWrite, Rule: pat, Subject: v.Lit,
				Reason: fmt.Sprintf("the shell command sets GIT_WORK_TREE to %q, a folder at or above a path tools may read but not write (rule %q)", v.Lit, pat)}, true
		}
	}
	return Decision{}, false
}

// runsElsewhere stops a command that hands shell code to a process that
// runs it later or in a server of its own, outside this command and any
// sandbox around it, where no reading of this line follows: crontab and
// at (what runs later, unconfined), and tmux commands that start or type
// commands (a tmux server may be the person's own, unconfined).
func runsElsewhere(c shCommand) (Decision, bool) {
	if len(c.Argv) == 0 {
		return Decision{}, false // a line of redirections alone (">0") runs nothing
	}
	name := path.Base(c.Name)
	var args []string
	for _, w := range c.Argv[1:] {
		if w.Dynamic {
			args = append(args, "?")
			continue
		}
		args = append(args, w.Lit)
	}
	block := func(what string) (Decision, bool) {
		return Decision{Action: ActionBlock, Code: CodeShellDynamicPath, Subject: name,
			Reason: fmt.Sprintf("the shell command %s: what it runs runs later or in another process, unconfined, and piagent does not read it; run it yourself if you mean it", what)}, true
	}
	switch name {
	case "crontab":
		for _, a := range args {
			if a != "-l" && a != "-u" && !strings.HasPrefix(a, "-") || a == "-e" || a == "-r" || a == "?" || a == "-" {
				return block("installs a crontab")
			}
		}
		if len(args) == 0 {
			return block("installs a crontab from its input")
		}
	case "at", "batch":
		for _, a := range args {
			if a == "-l" || a == "-d" || a == "-r" || a == "-c" {
				return Decision{}, false
			}
		}
		return block("queues a job for atd")
	case "tmux":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "-L" || a == "-S" || a == "-f" || a == "-c" || a == "-T" {
				if a == "-c" {
					return block("runs a command through tmux")
				}
				i++
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			switch a {
			case "ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "has-session", "has",
				"capture-pane", "capturep", "display-message", "display", "show-options", "show", "list-keys", "lsk":
				return Decision{}, false
			}
			return block("starts, types or runs a command in a tmux server (tmux " + a + ")")
		}
	}
	return Decision{}, false
}

func orStartDirs(dirs []string) []string {
	if len(dirs) == 0 {
		return []string{""}
	}
	return dirs
}
