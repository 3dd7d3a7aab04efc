package shell

import (
	"strings"

	"github.com/piagent/piagent/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// Code an interpreter is given (python -c, node -e, perl -e, ruby -e, awk's
// program, a here-document fed to python3 or node) is read for the two
// things that reach beyond it: starting a program, and deleting a tree.
// A call whose argument is a string literal (or a list of them) is read
// through as the command it runs: `os.system('rm -rf ~')` is `rm -rf ~`,
// `shutil.rmtree('/home')` is `rm -rf /home`. A call whose argument is
// computed leaves the command Opaque, which a person confirms.

// codeAPIs matches a call that starts a program or deletes files, up to
// its opening parenthesis (or the space of a Perl or Ruby call without
// one). Group 1 is the object or module before a dot, group 2 the callee.
var codeAPIs = lazyre.New(`([\w$]+\.|\)\.|\]\.|\.)?\b` +
	`(system|execute|popen[234]?|exec[lv]p?e?|exec|execSync|execFile|execFileSync|spawn|spawnSync|spawn[lv]p?e?|run|call|check_call|check_output|Popen|getoutput|getstatusoutput|capture[23]e?|shell_exec|passthru|proc_open|Command|rmtree|removedirs|remove_tree|rm_rf|rm_r|rmSync|rmdirSync|removeSync|rm|rmdir|unlink|unlinkSync|remove|RemoveAll|sync)` +
	`\s*(\(|\s["'\[])`)

// awkPipe matches awk's pipes to and from commands: "cmd" | getline,
// print | "cmd", and getline < a computed name.
var awkPipe = lazyre.New(`\|\s*(getline|"|[a-zA-Z_])|\|&`)

// apiKind says what a callee does, given its module ("" when bare, "?"
// when it is a method of a value, as in require('child_process').exec).
func apiKind(mod, fn, code string) string {
	mod = strings.TrimSuffix(mod, ".")
	switch fn {
	case "execSync", "execFileSync", "spawnSync", "rmSync", "rmdirSync":
		if mod == "" { // destructured from require('child_process') or 'fs'
			mod = "?"
		}
	}
	if mod == "" && fn != "system" && fn != "popen" && fn != "exec" && fn != "spawn" && fn != "passthru" && fn != "shell_exec" && fn != "proc_open" && fn != "rmtree" && fn != "remove_tree" && fn != "rm_rf" {
		return "" // a bare name that is not a well-known process call
	}
	if mod == ")" || mod == "]" || mod == "?" {
		switch fn {
		case "execSync", "execFileSync", "spawnSync", "check_output", "getoutput", "getstatusoutput", "system", "popen":
			return "run"
		case "exec", "execFile", "spawn":
			if strings.Contains(code, "child_process") {
				return "run"
			}
			return ""
		case "rmSync", "rmdirSync", "rmtree", "rm_rf", "RemoveAll", "removeSync":
			return "tree"
		case "rm", "rmdir":
			if strings.Contains(code, "fs") {
				return "tree"
			}
			return ""
		case "unlink", "unlinkSync":
			return "file"
		}
		return ""
	}
	switch fn {
	case "system", "popen", "popen2", "popen3", "popen4", "shell_exec", "passthru", "proc_open", "getoutput", "getstatusoutput", "qx":
		return "run"
	case "execute":
		if mod == "os" { // Lua
			return "run"
		}
	case "exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync":
		if mod == "" || mod == "child_process" || mod == "cp" || mod == "Kernel" || mod == "os" || mod == "Bun" || mod == "pty" {
			return "run"
		}
	case "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
		"spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe":
		if mod == "os" {
			return "argv"
		}
	case "run", "call", "check_call", "check_output", "Popen":
		if mod == "subprocess" {
			return "run"
		}
	case "capture2", "capture2e", "capture3":
		if mod == "Open3" {
			return "run"
		}
	case "Command":
		if mod == "Deno" {
			return "run"
		}
	case "rmtree", "removedirs", "remove_tree", "rm_rf", "rm_r", "rmSync", "rmdirSync", "RemoveAll", "removeSync":
		return "tree"
	case "rm", "rmdir":
		if mod == "fs" || mod == "fsPromises" || mod == "promises" || mod == "FileUtils" {
			return "tree"
		}
	case "sync":
		if mod == "rimraf" {
			return "tree"
		}
	case "unlink", "unlinkSync", "remove":
		if mod == "os" || mod == "fs" || mod == "fsPromises" || mod == "promises" || mod == "File" || mod == "FileUtils" {
			return "file"
		}
	}
	return ""
}

// codeSource is the code an interpreter command runs when it comes from
// its standard input: a literal here-document or here-string, or the
// echo or printf piped into it.
func codeSource(c *Command, stdin *syntax.Redirect, sc scope) (Word, bool) {
	if stdin != nil {
		switch stdin.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			return wordOnly(stdin.Hdoc, sc), true
		case syntax.WordHdoc:
			return wordOnly(stdin.Word, sc), true
		}
		return Word{}, false
	}
	if text, ok := pipedText(sc); ok {
		return Word{Lit: text}, true
	}
	if sc.pipeIn != "" {
		return Word{Lit: sc.pipeIn, Dynamic: true, Expands: true}, true
	}
	return Word{}, false
}

// interpreted reports whether c runs code in an interpreter, with that
// code.
func interpreted(c *Command, stdin *syntax.Redirect, sc scope) []Word {
	code := codeArgs(c)
	if len(code) > 0 {
		return code
	}
	name := progName(c.Argv[0].Lit)
	o, ok := interpreters[name]
	if !ok {
		return nil
	}
	_, pos := parseGNU(c.Argv[1:], o)
	if len(pos) > 0 && pos[0].Lit != "-" {
		return nil // a script file, or a module (-m)
	}
	if w, ok := codeSource(c, stdin, sc); ok {
		return []Word{w}
	}
	return nil
}

// interp reads what code does. It emits the commands the code runs as
// commands of the line (context "<interpreter> code") and returns the
// code left unread: a call whose argument is computed.
func (w *walker) interp(c *Command, code []Word, sc scope, bg bool) {
	name := progName(c.Argv[0].Lit)
	in := sc.with(name + " code")
	in.wrappers = appendWrapper(sc.wrappers, name)
	for _, cw := range code {
		if cw.Expands {
			if codeAPIs().MatchString(cw.Lit) || cw.Lit == "" {
				c.Opaque = cw.Lit
			}
			continue
		}
		src := cw.Lit
		switch {
		case isAwk(name) && awkPipe().MatchString(src):
			c.Opaque = src // awk's "cmd" | getline and print | "cmd"
		case (name == "perl" || name == "ruby" || name == "php") && (strings.Contains(src, "qx") || strings.Contains(src, "%x") || strings.Contains(src, "open") && strings.Contains(src, "|")):
			c.Opaque = src // qx{…}, %x(…), a pipe open
		case name == "perl" || name == "ruby" || name == "php":
			for rest := src; ; {
				i := strings.IndexByte(rest, '`')
				if i < 0 {
					break
				}
				lit, r, ok := stringLit(rest[i:])
				if !ok {
					c.Opaque = src
					break
				}
				if err := w.parse(lit, in, sc.depth+1, name+" code"); err != nil {
					if !isSyntax(err) {
						w.err = err
						return
					}
					c.Opaque = src
				}
				rest = r
			}
		}
		for _, m := range codeAPIs().FindAllStringSubmatchIndex(src, -1) {
			mod, fn := "", src[m[4]:m[5]]
			if m[2] >= 0 {
				mod = src[m[2]:m[3]]
				if mod == "." {
					mod = "?"
				}
			}
			kind := apiKind(mod, fn, src)
			if isAwk(name) && fn == "system" {
				kind = "run"
			}
			if kind == "" {
				continue
			}
			start := m[6]
			if src[start] == '(' {
				start++
			}
			argv, ok := callArgs(src[start:], kind)
			if !ok {
				c.Opaque = src
				continue
			}
			switch kind {
			case "run":
				if len(argv) == 1 && !argv[0].Dynamic {
					if err := w.parse(argv[0].Lit, in, sc.depth+1, name+" code"); err != nil {
						if !isSyntax(err) {
							w.err = err
							return
						}
						c.Opaque = src
					}
					continue
				}
				if len(argv) == 0 || argv[0].Dynamic {
					c.Opaque = src
					continue
				}
				w.run(argv, nil, nil, in, bg)
			case "argv":
				// os.execvp(file, [argv0, args…]): the list is the argv
				if len(argv) > 1 {
					argv = argv[1:]
				}
				if len(argv) == 0 || argv[0].Dynamic {
					c.Opaque = src
					continue
				}
				w.run(argv, nil, nil, in, bg)
			case "tree", "file":
				if len(argv) == 0 {
					c.Opaque = src
					continue
				}
				t := argv[0]
				if t.Dynamic && !t.Expands {
					t.Dynamic = false // a glob in code is a literal name
				}
				op := "-rf"
				if kind == "file" {
					op = "-f"
				}
				w.emit(Command{Argv: []Word{{Lit: "rm"}, {Lit: op}, {Lit: "--"}, t}}, in, bg)
			}
		}
	}
}

func isAwk(name string) bool {
	return name == "awk" || name == "gawk" || name == "mawk" || name == "nawk" || name == "busybox-awk"
}

// callArgs reads a call's first argument: a string literal, a list of
// them (Python, Ruby and JS arrays), or a literal program followed by a
// list of its arguments (spawn('rm', ['-rf', x])). Elements that are not
// literals are Dynamic words. ok is false when the first argument is
// not a literal at all. For "tree" and "file" only the first argument
// counts.
func callArgs(s, kind string) ([]Word, bool) {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return nil, false
	}
	lit, rest, ok := stringLit(s)
	if ok {
		argv := []Word{{Lit: lit}}
		if kind != "run" {
			return argv, true
		}
		rest = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimLeft(rest[1:], " \t")
			if strings.HasPrefix(rest, "[") {
				elems, ok := listLit(rest)
				if !ok {
					return nil, false
				}
				return append(argv, elems...), true
			}
			if kind == "run" && (strings.HasPrefix(rest, "'") || strings.HasPrefix(rest, `"`)) {
				// system('rm', '-rf', x): Perl's and Ruby's list form
				for {
					l, r, ok := stringLit(rest)
					if !ok {
						break
					}
					argv = append(argv, Word{Lit: l})
					rest = strings.TrimLeft(r, " \t")
					if !strings.HasPrefix(rest, ",") {
						break
					}
					rest = strings.TrimLeft(rest[1:], " \t")
				}
				if rest != "" && rest[0] != ')' && rest[0] != ';' && rest[0] != '\n' {
					argv = append(argv, Word{Lit: rest, Dynamic: true, Expands: true, Pattern: "**"})
				}
			}
		}
		return argv, true
	}
	if strings.HasPrefix(s, "[") {
		return listLit(s)
	}
	return nil, false
}

// listLit reads a bracketed list; elements that are not string literals
// become Dynamic words.
func listLit(s string) ([]Word, bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return nil, false
	}
	var out []Word
	body := s[1:end]
	for body = strings.TrimSpace(body); body != ""; body = strings.TrimSpace(body) {
		if lit, rest, ok := stringLit(body); ok {
			out = append(out, Word{Lit: lit})
			body = strings.TrimPrefix(strings.TrimSpace(rest), ",")
			continue
		}
		el, rest, _ := strings.Cut(body, ",")
		out = append(out, Word{Lit: strings.TrimSpace(el), Dynamic: true, Expands: true, Pattern: "**"})
		body = rest
	}
	return out, true
}

// stringLit reads a quoted string literal at the start of s (', ", ` or
// Python's r/b prefixes) with common backslash escapes; ok is false when s
// does not start with one, or it holds an interpolation (${…}, #{…}, an
// f-string), whose value is computed.
func stringLit(s string) (lit, rest string, ok bool) {
	fstring := false
	for len(s) > 1 && strings.IndexByte("rRbBuUfF", s[0]) >= 0 && (s[1] == '\'' || s[1] == '"' || strings.IndexByte("rRbBfF", s[1]) >= 0) {
		fstring = fstring || s[0] == 'f' || s[0] == 'F'
		s = s[1:]
	}
	if s == "" || (s[0] != '\'' && s[0] != '"' && s[0] != '`') {
		return "", s, false
	}
	q := s[0]
	triple := len(s) >= 3 && s[1] == q && s[2] == q
	var b strings.Builder
	i := 1
	if triple {
		i = 3
	}
	for i < len(s) {
		c := s[i]
		if triple && c == q && strings.HasPrefix(s[i:], string([]byte{q, q, q})) {
			i += 3
			goto done
		}
		if !triple && c == q {
			i++
			goto done
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			i++
			continue
		}
		b.WriteByte(c)
		i++
	}
	return "", s, false // unterminated
done:
	lit = b.String()
	if fstring || strings.Contains(lit, "#{") || q == '`' && strings.Contains(lit, "${") {
		return lit, s[i:], false
	}
	return lit, s[i:], true
}
