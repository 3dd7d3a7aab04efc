package shell

import (
	"strings"

	"github.com/piagent/piagent/internal/shquote"
	"mvdan.cc/sh/v3/syntax"
)

// opts describes a program's options well enough to find its operands.
type opts struct {
	short    string // short options that take a value (attached or the next word)
	optional string // short options whose value is optional and only attached (xargs -i)
	long     string // long options that take a value, as " name other "
	plus     bool   // +x options too (shells)
}

func (o opts) takes(long string) bool {
	return o.long != "" && strings.Contains(o.long, " "+long+" ")
}

// each walks the leading options of args and returns the index of the
// first operand. fn, when not nil, sees each option ("-I", "--replace")
// with its value. A Dynamic word ends the options.
func (o opts) each(args []Word, fn func(name string, val Word)) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			return i
		}
		s := a.Lit
		if s == "--" {
			return i + 1
		}
		if len(s) < 2 || !(s[0] == '-' || o.plus && s[0] == '+') {
			return i
		}
		if s[0] == '-' && s[1] == '-' {
			name, val, hasVal := strings.Cut(s, "=")
			if !hasVal && o.takes(name[2:]) && i+1 < len(args) {
				i++
				if fn != nil {
					fn(name, args[i])
				}
				continue
			}
			if fn != nil {
				fn(name, Word{Lit: val})
			}
			continue
		}
		for j := 1; j < len(s); j++ {
			c := s[j]
			name := "-" + string(c)
			if strings.IndexByte(o.short, c) >= 0 {
				var val Word
				if j < len(s)-1 {
					val = Word{Lit: s[j+1:]}
				} else if i+1 < len(args) {
					i++
					val = args[i]
				}
				if fn != nil {
					fn(name, val)
				}
				break
			}
			if strings.IndexByte(o.optional, c) >= 0 {
				if fn != nil {
					fn(name, Word{Lit: s[j+1:]})
				}
				break
			}
			if fn != nil {
				fn(name, Word{})
			}
		}
	}
	return len(args)
}

func (o opts) skip(args []Word) int { return o.each(args, nil) }

// needsNext reports whether the option word s takes its value from the
// next word.
func (o opts) needsNext(s string) bool {
	if strings.HasPrefix(s, "--") {
		return !strings.Contains(s, "=") && o.takes(s[2:])
	}
	for j := 1; j < len(s); j++ {
		if strings.IndexByte(o.short, s[j]) >= 0 {
			return j == len(s)-1
		}
		if strings.IndexByte(o.optional, s[j]) >= 0 {
			return false
		}
	}
	return false
}

var (
	sudoOpts    = opts{short: "CDghpRrtTUu", long: " user group close-from chdir chroot host prompt role type command-timeout other-user login-class "}
	doasOpts    = opts{short: "uC"}
	niceOpts    = opts{short: "n", long: " adjustment "}
	timeoutOpts = opts{short: "sk", long: " signal kill-after "}
	stdbufOpts  = opts{short: "ioe", long: " input output error "}
	ioniceOpts  = opts{short: "cnpPu", long: " class classdata pid pgid uid "}
	chrootOpts  = opts{long: " userspec groups "}
	execOpts    = opts{short: "a"}
	timeOpts    = opts{short: "fo", long: " format output "}
	xargsOpts   = opts{short: "adEILnPs", optional: "eil", long: " arg-file delimiter max-args max-procs max-chars process-slot-var "}
	watchOpts   = opts{short: "nq", long: " interval equexit "}
	sshOpts     = opts{short: "BbcDEeFIiJLlmOopQRSWw"}
	npxOpts     = opts{short: "pc", long: " package call "}
	straceOpts  = opts{short: "abeEIoOpPsSuX"}
	flockOpts   = opts{short: "wEc", long: " timeout conflict-exit-code command "}
	plainOpts   = opts{}
)

// shells are the programs whose -c string and stdin are shell code.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "lksh": true, "oksh": true, "pdksh": true, "rbash": true, "posh": true,
	// other syntaxes: code that does not parse as bash is opaque, not an error
	"fish": true, "csh": true, "tcsh": true,
}

func foreignShell(name string) bool { return name == "fish" || name == "csh" || name == "tcsh" }

// progName is the name a program is matched by: the base name,
// lower-cased (macOS file systems ignore case), without ".exe" and without
// an npm "@version".
func progName(lit string) string {
	n := strings.ToLower(baseName(lit))
	n = strings.TrimSuffix(n, ".exe")
	if i := strings.LastIndexByte(n, '@'); i > 0 {
		n = n[:i]
	}
	return n
}

type peelResult int

const (
	notWrapper peelResult = iota
	peeled
	consumed // the wrapper's command came from a string that was parsed
)

// run peels wrappers off argv and records the command (and any command
// hidden in its strings).
func (w *walker) run(argv []Word, redirs []Redirect, stdin *syntax.Redirect, sc scope, bg bool) {
	for n := 0; len(argv) > 0 && n < 64 && w.err == nil; n++ {
		if argv[0].Dynamic {
			break
		}
		name := progName(argv[0].Lit)
		rest, res := w.peel(name, argv, &sc, redirs, bg)
		if res == consumed {
			if len(redirs) > 0 {
				w.emit(Command{Redirects: redirs}, sc, bg)
			}
			return
		}
		if res == notWrapper || len(rest) == 0 {
			break
		}
		switch {
		case name == "go":
			name = "go run"
		case (name == "npm" || name == "pnpm" || name == "yarn" || name == "bun") && len(argv) > 1:
			name += " " + argv[1].Lit
		}
		sc.wrappers = appendWrapper(sc.wrappers, name)
		argv = rest
	}
	if w.err != nil {
		return
	}
	w.final(Command{Argv: argv, Redirects: redirs}, stdin, sc, bg)
}

func operands(argv []Word, o opts) []Word {
	return argv[1+o.skip(argv[1:]):]
}

func isAssignment(w Word) bool {
	if w.Dynamic {
		return false
	}
	name, _, ok := strings.Cut(w.Lit, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func skipAssignments(ws []Word) []Word {
	for len(ws) > 0 && isAssignment(ws[0]) {
		ws = ws[1:]
	}
	return ws
}

func hasOpt(args []Word, o opts, names ...string) bool {
	found := false
	o.each(args, func(n string, _ Word) {
		for _, want := range names {
			if n == want {
				found = true
			}
		}
	})
	return found
}

// peel removes one wrapper. It returns the wrapped command's argv.
func (w *walker) peel(name string, argv []Word, sc *scope, redirs []Redirect, bg bool) ([]Word, peelResult) {
	args := argv[1:]
	switch name {
	case "sudo":
		if hasOpt(args, sudoOpts, "-l", "-e", "--list", "--edit") {
			return nil, notWrapper
		}
		return skipAssignments(operands(argv, sudoOpts)), peeled
	case "doas":
		return operands(argv, doasOpts), peeled
	case "nice":
		return operands(argv, niceOpts), peeled
	case "nohup", "setsid", "unbuffer", "caffeinate", "nsenter", "unshare", "firejail", "proxychains", "proxychains4", "torsocks", "catchsegv", "rlwrap":
		o := plainOpts
		if name == "caffeinate" {
			o = opts{short: "tw"}
		}
		return operands(argv, o), peeled
	case "timeout":
		rest := operands(argv, timeoutOpts)
		if len(rest) == 0 {
			return nil, notWrapper
		}
		return rest[1:], peeled
	case "stdbuf":
		return operands(argv, stdbufOpts), peeled
	case "ionice":
		if hasOpt(args, ioniceOpts, "-p", "-P", "-u", "--pid", "--pgid", "--uid") {
			return nil, notWrapper
		}
		return operands(argv, ioniceOpts), peeled
	case "chroot", "taskset", "chrt":
		o := chrootOpts
		if name != "chroot" {
			o = opts{}
			if hasOpt(args, o, "-p", "--pid") {
				return nil, notWrapper
			}
		}
		rest := operands(argv, o)
		if len(rest) < 2 {
			return nil, notWrapper
		}
		return rest[1:], peeled
	case "command":
		if hasOpt(args, plainOpts, "-v", "-V") {
			return nil, notWrapper
		}
		return operands(argv, plainOpts), peeled
	case "builtin":
		return args, peeled
	case "exec":
		return operands(argv, execOpts), peeled
	case "time":
		if hasOpt(args, timeOpts, "-o", "--output") {
			w.emit(Command{Argv: argv[:1+timeOpts.skip(args)]}, *sc, bg)
		}
		return operands(argv, timeOpts), peeled
	case "strace", "ltrace":
		if hasOpt(args, straceOpts, "-p") {
			return nil, notWrapper
		}
		return operands(argv, straceOpts), peeled
	case "busybox", "toybox":
		if len(args) > 0 && !args[0].Dynamic && !strings.HasPrefix(args[0].Lit, "-") {
			return args, peeled
		}
		return nil, notWrapper
	case "env":
		return w.peelEnv(argv, sc)
	case "xargs":
		return w.peelXargs(argv, sc, bg)
	case "flock":
		i := flockOpts.skip(args)
		if i >= len(args) {
			return nil, notWrapper
		}
		var code *Word
		flockOpts.each(args, func(n string, v Word) {
			if n == "-c" || n == "--command" {
				code = &v
			}
		})
		rest := args[i+1:]
		if code == nil && len(rest) > 0 && (rest[0].Lit == "-c" || rest[0].Lit == "--command") && len(rest) > 1 {
			code = &rest[1]
		}
		if code != nil {
			return w.code(*code, "flock -c", name, argv, sc, bg)
		}
		return rest, peeled
	case "npx", "bunx", "pnpx":
		return w.peelNpx(argv, sc, bg)
	case "npm", "pnpm", "yarn", "bun":
		if len(args) > 0 && !args[0].Dynamic {
			switch args[0].Lit {
			case "exec", "x", "dlx":
				if name == "npm" && args[0].Lit == "dlx" {
					break
				}
				return w.peelNpx(args, sc, bg)
			}
		}
	case "go":
		return peelGoRun(args)
	case "su":
		var code *Word
		opts{short: "cgGsw", long: " command group supp-group shell whitelist-environment "}.each(args, func(n string, v Word) {
			if n == "-c" || n == "--command" {
				code = &v
			}
		})
		if code != nil {
			return w.code(*code, "su -c", name, argv, sc, bg)
		}
	case "script":
		var code *Word
		opts{short: "cEIOBTm", long: " command echo log-in log-out log-io log-timing logging-format "}.each(args, func(n string, v Word) {
			if n == "-c" || n == "--command" {
				code = &v
			}
		})
		if code != nil {
			// script itself writes its typescript (the operand, or
			// ./typescript) and logs: read as a command of its own
			w.emit(Command{Argv: argv}, *sc, bg)
			return w.code(*code, "script -c", name, argv, sc, bg)
		}
	}
	return nil, notWrapper
}

// code parses a string that a wrapper runs as shell code.
func (w *walker) code(code Word, context, wrapper string, argv []Word, sc *scope, bg bool) ([]Word, peelResult) {
	if code.Expands {
		w.emit(Command{Argv: argv, Opaque: opaqueText(code.Lit, *sc)}, *sc, bg)
		return nil, consumed
	}
	in := sc.with(context)
	in.wrappers = appendWrapper(sc.wrappers, wrapper)
	if err := w.parse(code.Lit, in, sc.depth+1, context); err != nil {
		w.err = err
	}
	return nil, consumed
}

func (w *walker) peelEnv(argv []Word, sc *scope) ([]Word, peelResult) {
	args := argv[1:]
	i := 0
	var split *Word
loop:
	for i < len(args) {
		a := args[i]
		if a.Dynamic {
			break
		}
		s := a.Lit
		switch {
		case s == "--":
			i++
			break loop
		case s == "-S" || s == "--split-string":
			if i+1 < len(args) {
				split = &args[i+1]
			}
			i += 2
			break loop
		case strings.HasPrefix(s, "--split-string="):
			split = &Word{Lit: s[len("--split-string="):]}
			i++
			break loop
		case strings.HasPrefix(s, "-S") || strings.HasPrefix(s, "-iS") || strings.HasPrefix(s, "-vS"):
			split = &Word{Lit: s[strings.IndexByte(s, 'S')+1:]}
			i++
			break loop
		case s == "-u" || s == "-C" || s == "--unset" || s == "--chdir":
			i += 2
		case strings.HasPrefix(s, "-"):
			i++
		default:
			break loop
		}
	}
	if i > len(args) {
		i = len(args)
	}
	rest := skipAssignments(args[i:])
	if split != nil {
		if split.Dynamic {
			return append([]Word{*split}, rest...), peeled
		}
		words := w.splitWords(split.Lit, sc)
		if len(words) > 0 {
			sc.context = "env -S"
			return append(words, rest...), peeled
		}
	}
	if len(rest) == 0 {
		return nil, notWrapper
	}
	return rest, peeled
}

// splitWords splits env -S's string into words, the way a shell would.
func (w *walker) splitWords(s string, sc *scope) []Word {
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(s), "")
	parserPool.Put(p)
	in := *sc
	in.src = s
	if err == nil && len(f.Stmts) == 1 {
		if call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(f.Stmts[0].Redirs) == 0 {
			out := make([]Word, len(call.Args))
			for i, a := range call.Args {
				out[i] = wordOnly(a, in)
			}
			return out
		}
	}
	var out []Word
	for _, f := range strings.Fields(s) {
		out = append(out, Word{Lit: f})
	}
	return out
}

func (w *walker) peelXargs(argv []Word, sc *scope, bg bool) ([]Word, peelResult) {
	args := argv[1:]
	repl := ""
	ownIO := false
	i := xargsOpts.each(args, func(n string, v Word) {
		switch n {
		case "-I":
			repl = v.Lit
		case "-i", "--replace":
			repl = v.Lit
			if repl == "" {
				repl = "{}"
			}
		case "-a", "--arg-file":
			ownIO = true
		}
	})
	if ownIO {
		w.emit(Command{Argv: argv[:1+i]}, *sc, bg)
	}
	rest := args[i:]
	if len(rest) == 0 {
		rest = []Word{{Lit: "echo"}}
	}
	out := make([]Word, 0, len(rest)+1)
	for _, a := range rest {
		if repl != "" && strings.Contains(a.Lit, repl) {
			a = Word{Lit: a.Lit, Dynamic: true, Expands: true, Pattern: "**"}
		}
		out = append(out, a)
	}
	if repl == "" {
		out = append(out, xargsInput(sc.pipeArgv))
	}
	sc.context = "xargs"
	sc.pipeArgv = nil // the upstream text stays: it is what xargs turns into arguments
	return out, peeled
}

// xargsInput is the word xargs appends: the names the upstream command
// prints when it is `ls` of one glob or name (the glob's matches) or a
// find whose {} would be known (findUnder); anything else can be any
// string.
func xargsInput(up []Word) Word {
	any := Word{Dynamic: true, Expands: true, Pattern: "**"}
	if len(up) == 0 || up[0].Dynamic {
		return any
	}
	switch progName(up[0].Lit) {
	case "ls":
		var ops []Word
		for _, a := range up[1:] {
			if a.Expands {
				return any
			}
			if strings.HasPrefix(a.Lit, "-") && !a.Dynamic {
				if strings.ContainsAny(a.Lit, "RaAdlFpQ") || strings.HasPrefix(a.Lit, "--") && a.Lit != "--" {
					return any // other names, or more than names
				}
				continue
			}
			ops = append(ops, a)
		}
		switch len(ops) {
		case 0:
			return Word{Lit: "*", Dynamic: true, Pattern: "*"}
		case 1:
			if ops[0].Dynamic {
				return ops[0]
			}
		}
	case "find":
		roots, expr := findParts(up[1:])
		for _, e := range expr {
			if e.Lit == "-printf" || e.Lit == "-fprintf" {
				return any
			}
		}
		if under, name := findUnder(roots, up[1:], "{}"); under != "" {
			w := any
			w.Lit = "{}"
			w.Pattern = findPattern(roots, up[1:], "{}")
			w.Under, w.Name = under, name
			return w
		}
	}
	return any
}

func (w *walker) peelNpx(argv []Word, sc *scope, bg bool) ([]Word, peelResult) {
	var code *Word
	i := npxOpts.each(argv[1:], func(n string, v Word) {
		if n == "-c" || n == "--call" {
			code = &v
		}
	})
	if code != nil {
		return w.code(*code, "npx -c", progName(argv[0].Lit), argv, sc, bg)
	}
	return argv[1+i:], peeled
}

// peelGoRun turns `go run [build flags] ./cmd/piagent… args` into the
// program's own argv, for packages whose path names piagent; other `go`
// commands are not wrappers.
func peelGoRun(args []Word) ([]Word, peelResult) {
	if len(args) == 0 || args[0].Lit != "run" {
		return nil, notWrapper
	}
	args = args[1:]
	i := 0
	for i < len(args) && !args[i].Dynamic && strings.HasPrefix(args[i].Lit, "-") {
		s := strings.TrimLeft(args[i].Lit, "-")
		i++
		if s == "" {
			break
		}
		if !strings.Contains(s, "=") {
			switch s {
			case "exec", "tags", "ldflags", "gcflags", "mod", "modfile", "C", "p", "pkgdir", "toolexec",
				"overlay", "asmflags", "buildmode", "compiler", "installsuffix", "pgo", "covermode", "coverpkg", "o":
				i++
			}
		}
	}
	if i >= len(args) {
		return nil, notWrapper
	}
	pkg := args[i]
	j := i + 1
	if strings.HasSuffix(pkg.Lit, ".go") {
		for j < len(args) && strings.HasSuffix(args[j].Lit, ".go") {
			j++
		}
		dir := pkg.Lit[:max(strings.LastIndexByte(pkg.Lit, '/'), 0)]
		pkg = Word{Lit: dir, Dynamic: pkg.Dynamic, Expands: pkg.Expands, Pattern: pkg.Pattern}
	}
	if !strings.Contains(strings.ToLower(pkg.Lit), "piagent") {
		return nil, notWrapper
	}
	return append([]Word{pkg}, args[j:]...), peeled
}

// final records the command at the end of the wrappers, and follows the
// code it runs from strings.
func (w *walker) final(c Command, stdin *syntax.Redirect, sc scope, bg bool) {
	if len(c.Argv) == 0 {
		w.emit(c, sc, bg)
		return
	}
	if c.Argv[0].Dynamic {
		// `$SHELL -c 'code'`: the program is unknown, but read the code as
		// shell anyway.
		w.emit(c, sc, bg)
		if len(c.Argv) > 2 {
			a := c.Argv[1]
			if !a.Dynamic && len(a.Lit) > 1 && a.Lit[0] == '-' && a.Lit[1] != '-' && strings.IndexByte(a.Lit, 'c') > 0 && !c.Argv[2].Expands {
				in := sc.with("-c")
				in.wrappers = appendWrapper(sc.wrappers, c.Argv[0].Lit)
				if err := w.parse(c.Argv[2].Lit, in, sc.depth+1, "-c"); err != nil && !isSyntax(err) {
					w.err = err
				}
			}
		}
		return
	}
	name := progName(c.Argv[0].Lit)
	args := c.Argv[1:]
	if code := interpreted(&c, stdin, sc); len(code) > 0 {
		w.interp(&c, code, sc, bg)
		if w.err == nil {
			w.emit(c, sc, bg)
		}
		return
	}
	if w.throughs(&c, name, sc, bg) {
		return
	}
	switch {
	case name == "make" || name == "gmake":
		w.makefile(&c, stdin, sc)
	case name == "git":
		w.gitAlias(&c, sc)
	case shells[name]:
		w.shell(c, name, stdin, sc, bg)
		return
	case name == "eval":
		text, dyn := joinWords(args)
		if dyn {
			c.Opaque = opaqueText(text, sc)
			break
		}
		if len(c.Redirects) > 0 {
			w.emit(Command{Redirects: c.Redirects}, sc, bg)
		}
		in := sc.with("eval")
		if err := w.parse(text, in, sc.depth+1, "eval"); err != nil {
			w.err = err
		}
		return
	case name == "source" || name == ".":
		if ops := operands(c.Argv, plainOpts); len(ops) > 0 && ops[0].Expands {
			c.Opaque = ops[0].Lit
		}
	case name == "find":
		w.find(c, sc, bg)
		return
	case name == "watch":
		exec := false
		i := watchOpts.each(args, func(n string, _ Word) {
			if n == "-x" || n == "--exec" {
				exec = true
			}
		})
		rest := args[i:]
		if len(rest) == 0 {
			break
		}
		in := sc.with("watch")
		in.wrappers = appendWrapper(sc.wrappers, "watch")
		if exec {
			w.run(rest, c.Redirects, nil, in, bg)
			return
		}
		text, dyn := joinWords(rest)
		if dyn {
			c.Opaque = text
			break
		}
		if len(c.Redirects) > 0 {
			w.emit(Command{Redirects: c.Redirects}, sc, bg)
		}
		if err := w.parse(text, in, sc.depth+1, "watch"); err != nil {
			w.err = err
		}
		return
	case name == "ssh":
		i := sshOpts.skip(args)
		if i+1 >= len(args) {
			break
		}
		text, dyn := joinWords(args[i+1:])
		if dyn {
			c.Opaque = text
			break
		}
		w.emit(c, sc, bg)
		in := sc.with("ssh")
		if err := w.parse(text, in, sc.depth+1, "ssh"); err != nil {
			if isSyntax(err) {
				w.cmds[len(w.cmds)-1].Opaque = text
				return
			}
			w.err = err
		}
		return
	case name == "alias":
		w.emit(c, sc, bg)
		for _, a := range args {
			_, val, ok := strings.Cut(a.Lit, "=")
			if !ok || a.Dynamic {
				continue
			}
			in := sc.with("alias")
			if err := w.parse(val, in, sc.depth+1, "alias"); err != nil {
				if isSyntax(err) {
					continue
				}
				w.err = err
				return
			}
		}
		return
	}
	w.emit(c, sc, bg)
}

// opaqueText is the rendering of opaque code; under xargs the code's
// arguments come from the upstream command, so its text is added.
func opaqueText(code string, sc scope) string {
	if sc.context == "xargs" && sc.pipeIn != "" {
		return code + "\n" + sc.pipeIn
	}
	return code
}

func isSyntax(err error) bool {
	_, ok := err.(*ParseError)
	return ok
}

func joinWords(ws []Word) (string, bool) {
	var b strings.Builder
	dyn := false
	for i, a := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Lit)
		dyn = dyn || a.Expands
	}
	return b.String(), dyn
}

// shell follows `sh -c STRING`, a heredoc or here-string fed to a shell,
// and `echo … | sh`.
func (w *walker) shell(c Command, name string, stdin *syntax.Redirect, sc scope, bg bool) {
	args := c.Argv[1:]
	hasC, stdinMode := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			break
		}
		s := a.Lit
		if s == "--" || s == "-" {
			i++
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if s == "--rcfile" || s == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(s, "--") {
			continue
		}
		if strings.IndexByte(s[1:], 'c') >= 0 {
			hasC = true
		}
		if strings.IndexByte(s[1:], 's') >= 0 && s[0] == '-' {
			stdinMode = true
		}
		if strings.IndexByte(s[1:], 'o') >= 0 || strings.IndexByte(s[1:], 'O') >= 0 {
			i++
		}
	}
	nested := func(code, context string) {
		if len(c.Redirects) > 0 {
			w.emit(Command{Redirects: c.Redirects}, sc, bg)
		}
		in := sc.with(context)
		in.wrappers = appendWrapper(sc.wrappers, name)
		if err := w.parse(code, in, sc.depth+1, context); err != nil {
			if isSyntax(err) && foreignShell(name) {
				c.Opaque = code
				w.emit(c, sc, bg)
				return
			}
			w.err = err
		}
	}
	if hasC {
		if i >= len(args) {
			w.emit(c, sc, bg)
			return
		}
		if args[i].Expands {
			c.Opaque = opaqueText(args[i].Lit, sc)
			w.emit(c, sc, bg)
			return
		}
		nested(args[i].Lit, name+" -c")
		return
	}
	if i < len(args) && !stdinMode {
		// a script file; its content is the caller's to read
		if args[i].Expands {
			c.Opaque = args[i].Lit
		}
		w.emit(c, sc, bg)
		return
	}
	// The script comes from stdin.
	if stdin != nil {
		switch stdin.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			body := stdin.Hdoc
			if stdin.Op == syntax.WordHdoc {
				body = stdin.Word
			}
			wd := wordOnly(body, sc)
			if wd.Expands {
				c.Opaque = wd.Lit
				w.emit(c, sc, bg)
				return
			}
			nested(wd.Lit, name+" stdin")
			return
		}
		w.emit(c, sc, bg) // `sh < file`: the file is read (Reads)
		return
	}
	if text, ok := pipedText(sc); ok {
		if len(c.Redirects) > 0 {
			w.emit(Command{Redirects: c.Redirects}, sc, bg)
		}
		in := sc.with(name + " stdin")
		in.wrappers = appendWrapper(sc.wrappers, name)
		if err := w.parse(text, in, sc.depth+1, name+" stdin"); err != nil {
			if !isSyntax(err) {
				w.err = err
				return
			}
			c.Opaque = text
			w.emit(c, sc, bg)
		}
		return
	}
	c.Opaque = sc.pipeIn
	if c.Opaque == "" {
		c.Opaque = "stdin"
	}
	w.emit(c, sc, bg)
}

// find records the find itself and each command of its -exec, -execdir,
// -ok and -okdir actions.
func (w *walker) find(c Command, sc scope, bg bool) {
	w.emit(c, sc, bg)
	outer := w.cmds[len(w.cmds)-1]
	roots, _ := findParts(c.Argv[1:])
	args := c.Argv[1:]
	for i := 0; i < len(args) && w.err == nil; i++ {
		switch args[i].Lit {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j].Lit != ";" && args[j].Lit != "+" {
			j++
		}
		inner := make([]Word, 0, j-i-1)
		for _, a := range args[i+1 : j] {
			if strings.Contains(a.Lit, "{}") && !a.Dynamic {
				a = Word{Lit: a.Lit, Dynamic: true, Expands: true, Pattern: findPattern(roots, args, a.Lit)}
				a.Under, a.Name = findUnder(roots, args, a.Lit)
			}
			inner = append(inner, a)
		}
		if len(inner) > 0 {
			in := sc.with("find -exec")
			in.wrappers = appendWrapper(sc.wrappers, "find")
			in.outer = &outer
			w.run(inner, nil, nil, in, bg)
		}
		i = j
	}
}

// findParts splits find's arguments into its starting points and its
// expression.
func findParts(args []Word) (roots, expr []Word) {
	i := 0
	for i < len(args) && !args[i].Dynamic {
		s := args[i].Lit
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	if i > len(args) {
		i = len(args)
	}
	j := i
	for j < len(args) {
		s := args[j].Lit
		if !args[j].Dynamic && (strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == ")" || s == ",") {
			break
		}
		j++
	}
	roots = args[i:j]
	if len(roots) == 0 {
		roots = []Word{{Lit: "."}}
	}
	return roots, args[j:]
}

// findPattern is the glob the `{}` of a find -exec can match: everything
// under its single literal starting point, narrowed by a single -name.
func findPattern(roots, args []Word, lit string) string {
	if len(roots) != 1 || roots[0].Dynamic || lit != "{}" {
		return "**"
	}
	var b wordBuilder
	b.literal(strings.TrimRight(roots[0].Lit, "/"))
	p := string(b.pat) + "/**"
	_, expr := findParts(args)
	name := ""
	n := 0
	for k := 0; k+1 < len(expr); k++ {
		switch expr[k].Lit {
		case "-name", "-iname":
			name = expr[k+1].Lit
			n++
		case "-o", "-or", "!", "-not":
			return p
		}
	}
	if n == 1 && !strings.Contains(name, "/") {
		p += "/" + name
	}
	return p
}

// findUnder is the folder and name filter of what a find can hand its
// -exec as {}: set only for one literal starting point and an expression
// that does not widen (-o, !, -not) or follow links (-L, -follow).
func findUnder(roots, args []Word, lit string) (under, name string) {
	if len(roots) != 1 || roots[0].Dynamic || lit != "{}" {
		return "", ""
	}
	_, expr := findParts(args)
	n := 0
	for k := 0; k < len(expr); k++ {
		switch expr[k].Lit {
		case "-name":
			if k+1 < len(expr) && !expr[k+1].Dynamic {
				name = expr[k+1].Lit
				n++
			}
		case "-o", "-or", "!", "-not", "-follow", ",":
			return "", ""
		}
		if expr[k].Dynamic {
			return "", ""
		}
	}
	for _, a := range args {
		if a.Lit == "-L" {
			return "", ""
		}
	}
	if n > 1 || strings.Contains(name, "/") {
		name = ""
	}
	return roots[0].Lit, name
}

// pipedText is the text an echo or printf upstream in the pipeline
// writes, when it is literal.
func pipedText(sc scope) (string, bool) {
	up := sc.pipeArgv
	if len(up) == 0 || up[0].Dynamic {
		return "", false
	}
	ws := up[1:]
	switch progName(up[0].Lit) {
	case "echo":
		for len(ws) > 0 && (ws[0].Lit == "-n" || ws[0].Lit == "-e" || ws[0].Lit == "-E" || ws[0].Lit == "--") {
			ws = ws[1:]
		}
		text, dyn := joinWords(ws)
		return text, !dyn
	case "printf":
		if len(ws) > 0 && ws[0].Lit == "--" {
			ws = ws[1:]
		}
		if len(ws) == 0 {
			return "", false
		}
		for _, w := range ws {
			if w.Expands {
				return "", false
			}
		}
		return printfText(ws[0].Lit, ws[1:])
	}
	return "", false
}

// printfText renders printf FORMAT ARGS for %s, %b, %c, %d, %% and the
// common escapes, reusing the format while arguments remain, as printf
// does; ok is false for anything else.
func printfText(format string, args []Word) (string, bool) {
	var b strings.Builder
	for first := true; first || len(args) > 0; first = false {
		used := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '\\' && i+1 < len(format):
				i++
				switch format[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\\':
					b.WriteByte('\\')
				default:
					return "", false
				}
			case c == '%' && i+1 < len(format):
				i++
				switch format[i] {
				case '%':
					b.WriteByte('%')
				case 's', 'b', 'c', 'd':
					used = true
					if len(args) > 0 {
						b.WriteString(args[0].Lit)
						args = args[1:]
					}
				default:
					return "", false
				}
			default:
				b.WriteByte(c)
			}
		}
		if !used {
			break
		}
	}
	return b.String(), true
}

// makefile reads a makefile given on standard input (make -f - or
// -f /dev/stdin with a here-document): its recipe lines are shell. A
// makefile from anything else on stdin is opaque.
func (w *walker) makefile(c *Command, stdin *syntax.Redirect, sc scope) {
	flags, _ := parseGNU(c.Argv[1:], opts{short: "fCIoWj", long: " file makefile directory include-dir old-file what-if new-file assume-new assume-old jobs eval "})
	fromStdin := false
	for _, v := range values(flags, "-f", "--file", "--makefile") {
		if v.Lit == "-" || v.Lit == "/dev/stdin" || v.Lit == "/dev/fd/0" || v.Expands {
			fromStdin = true
		}
	}
	if len(values(flags, "--eval")) > 0 {
		c.Opaque = "make --eval"
		return
	}
	if !fromStdin {
		return
	}
	body, ok := codeSource(c, stdin, sc)
	if !ok || body.Expands {
		c.Opaque = body.Lit
		if c.Opaque == "" {
			c.Opaque = "make -f -"
		}
		return
	}
	in := sc.with("make recipe")
	in.wrappers = appendWrapper(sc.wrappers, "make")
	for _, line := range strings.Split(body.Lit, "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		recipe := strings.TrimLeft(line[1:], "@-+ \t")
		if err := w.parse(recipe, in, sc.depth+1, "make recipe"); err != nil {
			if !isSyntax(err) {
				w.err = err
				return
			}
			c.Opaque = body.Lit
		}
	}
}

// gitAlias reads the shell command of a git alias defined in the line,
// `git config alias.x '!cmd'` or `git -c alias.x='!cmd' x`: it runs when
// the alias is used.
func (w *walker) gitAlias(c *Command, sc scope) {
	args := c.Argv[1:]
	var bodies []Word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Lit == "-c" && i+1 < len(args) {
			if k, v, ok := strings.Cut(args[i+1].Lit, "="); ok && gitCommandKey(k) {
				bodies = append(bodies, Word{Lit: gitCommandValue(k, v), Expands: args[i+1].Expands})
			}
			i++
			continue
		}
		if gitCommandKey(a.Lit) && i+1 < len(args) {
			b := args[i+1]
			b.Lit = gitCommandValue(a.Lit, b.Lit)
			bodies = append(bodies, b)
			i++
		}
	}
	for _, a := range args {
		// git's ext:: transport runs a command ("% " is a space)
		if rest, ok := strings.CutPrefix(a.Lit, "ext::"); ok {
			bodies = append(bodies, Word{Lit: "!" + extCommand(rest), Expands: a.Expands})
		}
	}
	for _, b := range bodies {
		if b.Expands {
			c.Opaque = b.Lit
			continue
		}
		code, ok := strings.CutPrefix(b.Lit, "!")
		if !ok {
			continue
		}
		in := sc.with("git alias")
		in.wrappers = appendWrapper(sc.wrappers, "git")
		if err := w.parse(code, in, sc.depth+1, "git alias"); err != nil {
			if !isSyntax(err) {
				w.err = err
				return
			}
			c.Opaque = code
		}
	}
}

// gitCommandKey reports whether a git configuration key holds a command
// git runs: aliases starting with "!", and keys whose value is a shell
// command (core.pager, core.sshCommand, core.editor, …).
func gitCommandKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasPrefix(k, "alias.") {
		return true
	}
	switch k {
	case "core.pager", "core.sshcommand", "core.editor", "core.fsmonitor", "core.askpass", "sequence.editor",
		"diff.external", "gpg.program", "credential.helper", "pager.log", "pager.diff", "pager.show", "interactive.difffilter":
		return true
	}
	return (strings.HasPrefix(k, "filter.") && (strings.HasSuffix(k, ".clean") || strings.HasSuffix(k, ".smudge") || strings.HasSuffix(k, ".process"))) ||
		(strings.HasPrefix(k, "diff.") && strings.HasSuffix(k, ".textconv")) || (strings.HasPrefix(k, "merge.") && strings.HasSuffix(k, ".driver"))
}

// gitCommandValue writes a command-valued key's value the way gitAlias
// reads an alias body: prefixed with "!" (shell), except aliases, which
// run git itself unless they start with "!".
func gitCommandValue(k, v string) string {
	if strings.HasPrefix(strings.ToLower(k), "alias.") {
		return v
	}
	if k := strings.ToLower(k); k == "credential.helper" && !strings.HasPrefix(v, "!") && !strings.HasPrefix(v, "/") {
		return "" // git-credential-<name>
	}
	return "!" + strings.TrimPrefix(v, "!")
}

// commandVars are environment variables whose value a program runs as a
// shell command.
var commandVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "PAGER": true, "EDITOR": true, "VISUAL": true,
	"LESSOPEN": true, "LESSCLOSE": true, "MANPAGER": true, "PROMPT_COMMAND": true, "BASH_ENV": true, "ENV": true,
	"SUDO_ASKPASS": true, "RSYNC_RSH": true, "BROWSER": true,
}

// reach are programs whose commands the rules judge: when a program the
// reader does not know names one of them followed by more words, it is
// taken for a wrapper (parallel, hyperfine, entr, a project's own runner).
var reach = map[string]bool{
	"rm": true, "rimraf": true, "git": true, "dd": true, "shred": true, "chmod": true, "chown": true, "chgrp": true,
	"curl": true, "wget": true, "mv": true, "cp": true, "tee": true, "ln": true, "truncate": true, "find": true,
	"xargs": true, "sudo": true, "doas": true, "env": true, "eval": true, "exec": true, "command": true, "builtin": true,
	"piagent": true, "piagent-mcp": true, "pi": true, "npm": true, "npx": true, "pnpm": true, "yarn": true, "bun": true,
	"docker": true, "podman": true, "kubectl": true, "terraform": true, "gh": true, "aws": true, "gcloud": true,
	"rsync": true, "scp": true, "ssh": true, "make": true, "mkfs": true, "wipefs": true, "fdisk": true, "gpg": true,
	"cat": true, "tar": true, "zip": true, "install": true, "source": true, "watch": true, "timeout": true,
	"nohup": true, "setsid": true, "nice": true, "flock": true, "script": true, "su": true, "busybox": true,
}

// throughs reads a command through a program the reader does not know, or
// the exec form of a container or cluster tool: an argument with spaces
// whose first word is a program the rules judge is parsed as shell (and
// makes the command Opaque when it does not parse); an argument that is
// such a program starts the wrapped command. It reports whether c was
// emitted.
func (w *walker) throughs(c *Command, name string, sc scope, bg bool) bool {
	args := c.Argv[1:]
	switch {
	case (name == "docker" || name == "podman" || name == "nerdctl") && len(args) > 0 && (args[0].Lit == "exec" || args[0].Lit == "run"),
		(name == "kubectl" || name == "oc") && len(args) > 0 && args[0].Lit == "exec":
	case shells[name] || reach[name] || name == "eval" || catLike[name] != "" || grepLike[name].short != "" || noIO[name] || strings.HasPrefix(name, "mkfs"):
		return false
	default:
		if _, ok := interpreters[name]; ok {
			return false
		}
		if _, ok := catLike[name]; ok {
			return false
		}
	}
	in := sc.with("wrapped")
	in.wrappers = appendWrapper(sc.wrappers, name)
	for i, a := range args {
		if a.Dynamic || a.Lit == "" {
			continue
		}
		first, _, spaced := strings.Cut(strings.TrimSpace(a.Lit), " ")
		if spaced && (reach[progName(first)] || shells[progName(first)]) {
			if err := w.parse(a.Lit, in, sc.depth+1, "wrapped"); err != nil {
				if !isSyntax(err) {
					w.err = err
					return true
				}
				c.Opaque = a.Lit
			}
			continue
		}
		n := progName(a.Lit)
		_, interp := interpreters[n]
		if (reach[n] || shells[n] || interp) && i+1 < len(args) {
			w.emit(*c, sc, bg)
			w.run(args[i:], nil, nil, in, bg)
			return true
		}
	}
	return false
}

// extCommand writes git's ext:: command as shell: arguments split at
// spaces, "% " a space inside one, "%%" a percent sign.
func extCommand(s string) string {
	var args []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '%'):
			i++
			cur.WriteByte(s[i])
		case s[i] == ' ':
			args = append(args, shquote.Show(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	args = append(args, shquote.Show(cur.String()))
	return strings.Join(args, " ")
}
