package shell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth is how deeply code inside strings (`bash -c '…'`, literal
// `eval`, `watch`, `ssh host '…'`, a heredoc fed to a shell, …) is followed.
// Deeper nesting is an error wrapping [ErrTooDeep].
const MaxDepth = 8

// ErrSyntax is matched (errors.Is) by every [*ParseError].
var ErrSyntax = errors.New("shell syntax error")

// ErrTooDeep is returned when code is nested in strings more than
// [MaxDepth] levels deep.
var ErrTooDeep = errors.New("shell code nested too deeply")

// ParseError is a command line (or code nested in one of its strings) that
// does not parse. Line and Col are 1-based positions in that code.
type ParseError struct {
	Line, Col uint
	Msg       string
	// In is "" for the command line itself, or where the nested code came
	// from: "bash -c", "eval", "watch", …
	In string
}

func (e *ParseError) Error() string {
	if e.In != "" {
		return fmt.Sprintf("%s string: %d:%d: %s", e.In, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// Is reports whether target is [ErrSyntax].
func (e *ParseError) Is(target error) bool { return target == ErrSyntax }

// Word is one shell word after quote removal.
type Word struct {
	// Lit is the word's value when it is fully literal (quotes removed,
	// backslash escapes applied, `~` kept as written). For a Dynamic word it
	// is a best-effort rendering: literal parts decoded, expansions as
	// written in the source ($HOME, $(…)).
	Lit string
	// Dynamic is set when the value is not known before the shell runs:
	// parameter expansion, command, process or arithmetic substitution,
	// unquoted glob characters (* ? [), brace expansion, extended globs, the
	// arguments xargs or find -exec supply.
	Dynamic bool
	// Expands is set when a Dynamic word holds an expansion whose value is
	// only known at run time ($x, $(…), <(…), $((…)), xargs and find -exec
	// arguments), as opposed to only globbing, which stays inside the
	// directory the glob names.
	Expands bool `json:",omitempty"`
	// Pattern, for a Dynamic word, is a glob that matches every value the
	// word can take: literal parts escaped with `\`, glob parts kept
	// (path.Match syntax, `*` does not cross `/`), and `**` for anything an
	// expansion may produce, `/` included. Empty for a literal word.
	Pattern string `json:",omitempty"`
	// Under, when set, is a folder as written, and the word stands for the
	// files below it, at any depth, whose base names match Name (any name
	// when Name is ""): find's {}, the folder grep -r reads, what unzip -d
	// writes. The caller may list them instead of judging Pattern.
	Under string `json:",omitempty"`
	Name  string `json:",omitempty"`
	// Visible, with Under, leaves out hidden files and folders (rg and ag
	// skip them unless told otherwise).
	Visible bool `json:",omitempty"`
}

// Redirect is one redirection of a command. Op is ">", ">>", "<", "<>",
// "&>", "&>>", ">|", ">&" or "<&". Here-documents and here-strings are data
// and are not listed.
type Redirect struct {
	Op     string
	Target Word
	FD     string // the explicit descriptor before Op ("2" in 2>err), "" if none
}

// Command is one simple command found anywhere in a command line.
type Command struct {
	// Argv is the command after wrappers were peeled off; Argv[0] is the
	// program as written (it may be a path). Argv is empty for a statement
	// that is only redirections, such as `> file` or the redirections of a
	// `{ …; } > file` group.
	Argv []Word
	// Name is the base name of Argv[0].Lit ("" when Argv is empty).
	Name string
	// Wrappers are the programs peeled off in front of Argv, outermost
	// first: sudo, env, nice, timeout, xargs, bash (for `bash -c`), …
	Wrappers []string `json:",omitempty"`
	// Redirects are the file redirections that apply to this command.
	Redirects []Redirect `json:",omitempty"`
	// Context is where the command was found, innermost first: "",
	// "pipeline", "subshell", "cmdsubst", "procsubst", "function", "coproc",
	// "<shell> -c" (as in "bash -c"), "<shell> stdin", "eval", "find -exec",
	// "xargs", "watch", "env -S", "ssh", "su -c", "alias", "npx -c".
	Context string `json:",omitempty"`
	// Function is the name of the function whose body holds the command.
	Function string `json:",omitempty"`
	// Background is set for a command started with `&`.
	Background bool `json:",omitempty"`
	// Opaque is non-empty when the command runs shell code this analysis
	// cannot see: `eval "$x"`, `sh -c "$x"`, a shell reading a script from a
	// pipe, `source <(…)`. It holds a best-effort rendering of that code
	// (the eval's words, the upstream command of the pipe), for matching
	// only: it may contain anything the command line contains.
	Opaque string `json:"-"`
	// Outer is the command that runs this one and supplies its dynamic
	// arguments: the find of a `find … -exec`.
	Outer *Command `json:",omitempty"`
	// Dirs are the folders the command may run in, following the cd,
	// pushd and popd before it in the same shell: "" is the folder the line
	// starts in, a relative path is relative to that folder, "~" paths are
	// in the home folder, and "?" is a folder not known before the line
	// runs. A cd can fail, so the folders before it stay possible. Nil
	// means only the starting folder.
	Dirs []string `json:",omitempty"`
}

// Assignment is a variable assignment anywhere in a command line: a
// statement of assignments, a command's environment prefix (FOO=1 cmd),
// declare/export/local/readonly, an array element, or a for loop's items.
type Assignment struct {
	Name  string
	Value Word
}

// Analysis is every simple command of a command line, in the order the
// shell would start them: the substitutions in a command's words come
// before the command.
type Analysis struct {
	Commands    []Command
	Assignments []Assignment `json:",omitempty"`

	ioOnce sync.Once
	io     []sink // sinks

	atOnce   sync.Once
	readsAt  [][]Word // ReadsAt, per command
	writesAt [][]Word // WritesAt, per command

	scanOnce sync.Once
	scanned  lineFacts // lineFacts
}

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// Parse analyses a bash command line. It returns a [*ParseError] when the
// line (or code nested in one of its strings) does not parse, and an error
// wrapping [ErrTooDeep] past [MaxDepth].
//
// The analysis of the last few lines is kept: one tool call's command is
// read by the guard's self-protection and by the tool policy, and both get
// the same *Analysis, which no caller may change.
func Parse(src string) (*Analysis, error) {
	if a, err, ok := recent.get(src); ok {
		return a, err
	}
	a, err := parse(src)
	recent.put(src, a, err)
	return a, err
}

// parse is Parse without the memory.
func parse(src string) (*Analysis, error) {
	// room for a few commands at once: a Command is large, and growing the
	// list from one was a tenth of what reading a line allocated
	w := &walker{cmds: make([]Command, 0, 4)}
	if err := w.parse(src, scope{}, 0, ""); err != nil {
		return nil, err
	}
	return &Analysis{Commands: w.cmds, Assignments: w.assigns}, nil
}

// recent is Parse's memory of the last lines it read.
var recent parses

type parses struct {
	mu   sync.Mutex
	next int
	ring [4]struct {
		src string
		a   *Analysis
		err error
		set bool
	}
}

func (p *parses) get(src string) (*Analysis, error, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.ring {
		if e := &p.ring[i]; e.set && e.src == src {
			return e.a, e.err, true
		}
	}
	return nil, nil, false
}

func (p *parses) put(src string, a *Analysis, err error) {
	if len(src) > 64<<10 {
		return // not worth holding on to
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := &p.ring[p.next]
	e.src, e.a, e.err, e.set = src, a, err, true
	p.next = (p.next + 1) % len(p.ring)
}

type walker struct {
	cmds    []Command
	assigns []Assignment
	err     error
	dirs    []string // where the next command may run (Command.Dirs)
	// cdTo is where the last command, a cd, went, if it succeeded: what
	// runs after `cd x &&` runs there only. Nil when the last command was
	// not a cd.
	cdTo []string
	// vars are variables with a known value (walker.value); changed is set
	// once a command that may create, move or link files was seen.
	vars    map[string]Word
	changed bool
}

// apart runs fn as the shell runs a subshell: a cd inside does not move
// the commands after it.
func (w *walker) apart(fn func()) {
	dirs := w.dirs
	fn()
	w.dirs, w.cdTo = dirs, nil
}

func (w *walker) setVar(name string, v Word) {
	if name == "IFS" {
		w.changed = true // word splitting changes: no value is known
		return
	}
	if strings.ContainsAny(v.Lit, " \t\n") {
		return // split into words where it is used
	}
	if w.vars == nil {
		w.vars = map[string]Word{}
	}
	w.vars[name] = v
}

func (w *walker) assign(as *syntax.Assign, sc scope) {
	if as == nil || as.Name == nil {
		return
	}
	if w.vars != nil {
		delete(w.vars, as.Name.Value)
	}
	if as.Name.Value == "IFS" {
		w.changed = true
	}
	if as.Value != nil {
		v := wordOnly(as.Value, sc)
		w.assigns = append(w.assigns, Assignment{Name: as.Name.Value, Value: v})
		if commandVars[as.Name.Value] {
			// a command some program will run: read it as one
			in := sc.with("env command")
			if v.Expands {
				w.emit(Command{Argv: []Word{v}, Opaque: v.Lit}, in, false)
			} else if err := w.parse(strings.TrimLeft(v.Lit, "|"), in, sc.depth+1, "env command"); err != nil && !isSyntax(err) {
				w.err = err
			}
		}
		if !v.Expands && !w.changed && !as.Append && as.Index == nil {
			w.setVar(as.Name.Value, v)
		}
	}
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el != nil && el.Value != nil {
				w.assigns = append(w.assigns, Assignment{Name: as.Name.Value, Value: wordOnly(el.Value, sc)})
			}
		}
	}
}

// scope is what the walker carries down the tree.
type scope struct {
	context  string
	wrappers []string
	fn       string
	depth    int
	src      string // the code the current nodes were parsed from
	pipeIn   string // source of the upstream command when inside `a | b`'s b
	pipeArgv []Word // argv of that upstream command when it is one simple command
	outer    *Command
}

func (w *walker) parse(src string, sc scope, depth int, in string) error {
	if depth > MaxDepth {
		return fmt.Errorf("%w (more than %d levels)", ErrTooDeep, MaxDepth)
	}
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	if err != nil {
		return toParseError(err, in)
	}
	sc.depth = depth
	sc.src = src
	sc.pipeIn, sc.pipeArgv = "", nil
	if in == "eval" || in == "alias" || depth == 0 {
		w.stmts(f.Stmts, sc) // the same shell
	} else {
		w.apart(func() { w.stmts(f.Stmts, sc) }) // another process
	}
	return w.err
}

func toParseError(err error, in string) error {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Line: pe.Pos.Line(), Col: pe.Pos.Col(), Msg: pe.Text, In: in}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return &ParseError{Line: le.Pos.Line(), Col: le.Pos.Col(), Msg: le.Feature + " is not supported", In: in}
	}
	return &ParseError{Msg: err.Error(), In: in}
}

func (sc scope) with(context string) scope {
	sc.context = context
	sc.pipeIn, sc.pipeArgv = "", nil
	sc.outer = nil
	return sc
}

func (sc scope) text(n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if s <= e && int(e) <= len(sc.src) {
		return sc.src[s:e]
	}
	return ""
}

func (w *walker) stmts(list []*syntax.Stmt, sc scope) {
	for _, s := range list {
		if w.err != nil {
			return
		}
		w.stmt(s, sc)
	}
}

func (w *walker) stmt(s *syntax.Stmt, sc scope) {
	if s == nil {
		return
	}
	redirs, stdin := w.redirects(s.Redirs, sc)
	switch c := s.Cmd.(type) {
	case nil:
		if len(redirs) > 0 {
			w.emit(Command{Redirects: redirs}, sc, s.Background)
		}
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			if as != nil {
				w.assign(as, sc)
				w.nested(as, sc)
			}
		}
		if len(c.Args) == 0 {
			if len(redirs) > 0 {
				w.emit(Command{Redirects: redirs}, sc, s.Background)
			}
			return
		}
		argv := make([]Word, len(c.Args))
		for i, a := range c.Args {
			argv[i] = w.word(a, sc)
		}
		w.run(argv, redirs, stdin, sc, s.Background)
	default:
		if len(redirs) > 0 {
			w.emit(Command{Redirects: redirs}, sc, s.Background)
		}
		w.compound(c, s, sc)
	}
}

func (w *walker) compound(cmd syntax.Command, s *syntax.Stmt, sc scope) {
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			in := sc.with("pipeline")
			w.apart(func() { w.stmt(c.X, in) })
			in.pipeIn = sc.text(c.X)
			if call, ok := c.X.Cmd.(*syntax.CallExpr); ok && len(c.X.Redirs) == 0 {
				in.pipeArgv = make([]Word, len(call.Args))
				for i, a := range call.Args {
					in.pipeArgv[i] = wordOnly(a, sc)
				}
			}
			w.apart(func() { w.stmt(c.Y, in) })
			return
		}
		w.cdTo = nil
		w.stmt(c.X, sc)
		if c.Op == syntax.AndStmt && w.cdTo != nil {
			w.dirs = w.cdTo // the cd succeeded, or nothing after && runs
		}
		w.stmt(c.Y, sc)
	case *syntax.Subshell:
		w.apart(func() { w.stmts(c.Stmts, sc.with("subshell")) })
	case *syntax.Block:
		w.stmts(c.Stmts, sc)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, sc)
			w.stmts(ic.Then, sc)
		}
	case *syntax.WhileClause:
		w.forgetAssigned(c) // a later turn sees what an earlier one assigned
		w.stmts(c.Cond, sc)
		w.stmts(c.Do, sc)
	case *syntax.ForClause:
		w.forgetAssigned(c)
		var values []Word // the loop variable's values, when the line says
		name := ""
		if it, ok := c.Loop.(*syntax.WordIter); ok && it.Name != nil {
			name = it.Name.Value
			for _, item := range it.Items {
				v := wordOnly(item, sc)
				w.assigns = append(w.assigns, Assignment{Name: name, Value: v})
				values = append(values, v)
			}
			if w.changed || assignsIn(c.Do...)[name] || len(values) > maxLoopValues || len(values) == 0 {
				values = nil
			}
			for _, v := range values {
				if v.Expands || strings.ContainsAny(v.Lit, " \t\n") {
					values = nil
					break
				}
			}
		}
		if c.Loop != nil {
			w.nested(c.Loop, sc)
		}
		if values == nil {
			w.stmts(c.Do, sc)
			break
		}
		// The body, read once for each value the variable takes.
		for _, v := range values {
			w.setVar(name, v)
			w.stmts(c.Do, sc)
		}
		delete(w.vars, name)
	case *syntax.CaseClause:
		if c.Word != nil {
			w.nested(c.Word, sc)
		}
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				if p != nil {
					w.nested(p, sc)
				}
			}
			w.stmts(it.Stmts, sc)
		}
	case *syntax.FuncDecl:
		in := sc.with("function")
		if c.Name != nil {
			in.fn = c.Name.Value
		}
		w.apart(func() { w.stmt(c.Body, in) })
	case *syntax.TimeClause:
		in := sc
		in.wrappers = appendWrapper(sc.wrappers, "time")
		w.stmt(c.Stmt, in)
	case *syntax.CoprocClause:
		w.stmt(c.Stmt, sc.with("coproc"))
	case *syntax.TestDecl:
		if c.Description != nil {
			w.nested(c.Description, sc)
		}
		w.stmt(c.Body, sc.with("function"))
	case *syntax.DeclClause:
		// declare -n r=HOME: r names another variable, its value is not
		// the word assigned
		nameref := false
		for _, as := range c.Args {
			if as != nil && as.Naked && as.Name == nil && as.Value != nil {
				if f := wordOnly(as.Value, sc); f.Dynamic || strings.HasPrefix(f.Lit, "-") && strings.Contains(f.Lit, "n") {
					nameref = true
				}
			}
		}
		for _, as := range c.Args {
			w.assign(as, sc)
			if nameref && as != nil && as.Name != nil {
				delete(w.vars, as.Name.Value)
			}
		}
		w.nested(c, sc)
	default:
		// ArithmCmd, TestClause, LetClause: no command of their
		// own, but substitutions inside them run.
		w.nested(c, sc)
	}
}

// nested finds the command and process substitutions below n.
func (w *walker) nested(n syntax.Node, sc scope) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			w.apart(func() { w.stmts(x.Stmts, sc.with("cmdsubst")) })
			return false
		case *syntax.ProcSubst:
			w.apart(func() { w.stmts(x.Stmts, sc.with("procsubst")) })
			return false
		}
		return w.err == nil
	})
}

func (w *walker) redirects(rs []*syntax.Redirect, sc scope) ([]Redirect, *syntax.Redirect) {
	var out []Redirect
	var stdin *syntax.Redirect
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.N == nil || r.N.Value == "0" {
				stdin = r
			}
			if r.Hdoc != nil {
				w.nested(r.Hdoc, sc)
			}
			continue
		case syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				stdin = r
			}
			if r.Word != nil {
				w.nested(r.Word, sc)
			}
			continue
		}
		if r.Word == nil {
			continue
		}
		rd := Redirect{Op: r.Op.String(), Target: w.word(r.Word, sc)}
		if r.N != nil {
			rd.FD = r.N.Value
		}
		out = append(out, rd)
		if r.Op == syntax.RdrIn && (r.N == nil || r.N.Value == "0") {
			stdin = r
		}
	}
	return out, stdin
}

func (w *walker) emit(c Command, sc scope, bg bool) {
	if len(c.Argv) > 0 {
		c.Name = baseName(c.Argv[0].Lit)
	}
	if len(sc.wrappers) > 0 {
		c.Wrappers = append([]string(nil), sc.wrappers...)
	}
	c.Context = sc.context
	c.Function = sc.fn
	c.Background = bg
	if c.Outer == nil {
		c.Outer = sc.outer
	}
	c.Dirs = w.dirs
	w.cmds = append(w.cmds, c)
	if !w.changed && !readsOnly(&c) {
		w.changed = true
	}
	w.cdTo = nil
	for _, name := range readsInto(&c) {
		delete(w.vars, name) // assigned a value the line does not hold
	}
	switch c.Name {
	case "cd", "pushd", "popd":
		if sameShell(c.Wrappers) && c.Opaque == "" {
			t := cdTarget(c)
			if t != "?" && w.cdElsewhere(c, t) {
				t = "?"
			}
			w.cdTo = nil
			for _, d := range orStart(w.dirs) {
				if n := joinDir(d, t); !slices.Contains(w.cdTo, n) {
					w.cdTo = append(w.cdTo, n)
				}
			}
			w.dirs = moveDirs(w.dirs, t)
		}
	}
}

// cdElsewhere reports whether a cd to t may land somewhere joinDir does not
// give: a physical cd (cd -P, or after set -P or set -o physical) steps up
// a ".." from where a link leads, not from the words written; with CDPATH
// set on the line, a bare name is looked up in CDPATH's folders first.
func (w *walker) cdElsewhere(c Command, t string) bool {
	if hasDotDot(t) {
		physical := false
		for _, a := range c.Argv[1:] {
			if a.Lit == "--" {
				break
			}
			if strings.HasPrefix(a.Lit, "-") && !strings.HasPrefix(a.Lit, "--") && strings.Contains(a.Lit, "P") {
				physical = true
			}
		}
		for _, prev := range w.cmds {
			if prev.Name != "set" {
				continue
			}
			for i, a := range prev.Argv[1:] {
				if a.Dynamic || strings.HasPrefix(a.Lit, "-") && !strings.HasPrefix(a.Lit, "--") && strings.Contains(a.Lit, "P") ||
					a.Lit == "physical" && i > 0 {
					physical = true
				}
			}
		}
		if physical {
			return true
		}
	}
	if t == "" || t == "~" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~/") || t == "." || t == ".." ||
		strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		return false
	}
	for _, as := range w.assigns {
		if as.Name == "CDPATH" {
			return true
		}
	}
	return false
}

// hasDotDot reports whether a slash path has a ".." segment.
func hasDotDot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

func orStart(dirs []string) []string {
	if dirs == nil {
		return []string{""}
	}
	return dirs
}

// sameShell reports whether a command under these wrappers still runs in
// the shell itself (so a cd moves it).
func sameShell(wrappers []string) bool {
	for _, w := range wrappers {
		if w != "builtin" && w != "command" {
			return false
		}
	}
	return true
}

// maxLoopValues bounds how many literal items a for loop's body is read
// once for; past it, the variable is computed.
const maxLoopValues = 8

// maxDirs bounds Command.Dirs; past it the folder is unknown.
const maxDirs = 16

// cdTarget is the folder a cd, pushd or popd moves to, as written, or "?".
func cdTarget(c Command) string {
	if c.Name == "popd" {
		return "?"
	}
	for _, a := range c.Argv[1:] {
		if a.Expands {
			if lit, ok := homeVar(a.Lit); ok {
				return lit
			}
			return "?"
		}
		if a.Dynamic || a.Lit == "-" || strings.HasPrefix(a.Lit, "+") {
			return "?"
		}
		if a.Lit == "--" {
			continue
		}
		if strings.HasPrefix(a.Lit, "-") && len(a.Lit) > 1 {
			if c.Name == "pushd" && strings.Trim(a.Lit[1:], "0123456789") == "" {
				return "?" // pushd -N rotates the stack
			}
			continue
		}
		if a.Lit == "" {
			return ""
		}
		return a.Lit
	}
	if c.Name == "pushd" {
		return "?" // swaps the top two folders
	}
	return "~"
}

// moveDirs is the set of folders after a cd to t from any of dirs. The
// cd can fail, so dirs stay in the set.
func moveDirs(dirs []string, t string) []string {
	if dirs == nil {
		dirs = []string{""}
	}
	out := slices.Clone(dirs)
	for _, d := range dirs {
		n := joinDir(d, t)
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > maxDirs {
		out = append(out[:maxDirs-1], "?")
	}
	return out
}

func joinDir(d, t string) string {
	switch {
	case d == "?" || t == "?":
		return "?"
	case strings.HasPrefix(t, "/"):
		return path.Clean(t)
	case t == "~" || strings.HasPrefix(t, "~/"):
		return homeDir(t[1:])
	case strings.HasPrefix(t, "~"):
		return "?" // another user's home
	case d == "":
		return path.Clean(t)
	case d == "~" || strings.HasPrefix(d, "~/"):
		return homeDir(d[1:] + "/" + t)
	}
	return path.Join(d, t)
}

// homeDir writes a folder under the home folder as "~/rest", or "?" when
// rest climbs out of it (its parent's name is not known here).
func homeDir(rest string) string {
	r := path.Clean(strings.TrimLeft(rest, "/"))
	switch {
	case r == ".":
		return "~"
	case r == ".." || strings.HasPrefix(r, "../"):
		return "?"
	}
	return "~/" + r
}

func appendWrapper(ws []string, name string) []string {
	out := make([]string, len(ws), len(ws)+1)
	copy(out, ws)
	return append(out, name)
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if p == "" {
		return ""
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// readsOnly reports whether a command creates, moves and links no file: a
// program whose files io.go knows (a reader, a lister, a builtin) that
// writes, removes and links nothing, redirections included (but
// /dev/null).
func readsOnly(c *Command) bool {
	if len(c.Argv) > 0 {
		if c.Argv[0].Dynamic {
			return false
		}
		name := progName(c.Argv[0].Lit)
		_, cat := catLike[name]
		_, grep := grepLike[name]
		if !cat && !grep && !noIO[name] && name != "[[" {
			return false
		}
	}
	var s sink
	commandIO(c, &s)
	for _, w := range s.writes {
		if w.Lit != "/dev/null" {
			return false
		}
	}
	return len(s.trees) == 0 && len(s.links) == 0
}

// forgetAssigned drops the known value of every variable a loop assigns
// anywhere in it: from its second turn on, a use sees that assignment.
func (w *walker) forgetAssigned(loop syntax.Node) {
	for name := range assignsIn(loop) {
		delete(w.vars, name)
	}
}

// assignsIn names the variables assigned anywhere below n: assignments,
// for loops, and the builtins that read into variables.
func assignsIn[N syntax.Node](nodes ...N) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		syntax.Walk(n, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Assign:
				if x.Name != nil {
					out[x.Name.Value] = true
				}
			case *syntax.WordIter:
				if x.Name != nil {
					out[x.Name.Value] = true
				}
			case *syntax.CallExpr:
				if len(x.Args) > 0 {
					args := make([]Word, len(x.Args))
					for i, a := range x.Args {
						args[i] = Word{Lit: a.Lit()}
					}
					c := Command{Argv: args, Name: baseName(args[0].Lit)}
					for _, name := range readsInto(&c) {
						out[name] = true
					}
				}
			}
			return true
		})
	}
	return out
}

// readsInto names the variables a builtin assigns from what it reads:
// read, mapfile/readarray, getopts, printf -v, unset.
func readsInto(c *Command) []string {
	if len(c.Argv) == 0 {
		return nil
	}
	var names []string
	args := c.Argv[1:]
	switch c.Name {
	case "read", "mapfile", "readarray", "unset":
		for i := 0; i < len(args); i++ {
			a := args[i].Lit
			if strings.HasPrefix(a, "-") {
				if a == "-a" && i+1 < len(args) && c.Name == "read" {
					names = append(names, args[i+1].Lit)
					i++
				} else if len(a) == 2 && strings.Contains(map[string]string{"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}[c.Name], a[1:]) {
					i++ // an option with a value
				}
				continue
			}
			names = append(names, a)
		}
		if c.Name == "read" && len(names) == 0 {
			names = append(names, "REPLY")
		}
		if (c.Name == "mapfile" || c.Name == "readarray") && len(names) == 0 {
			names = append(names, "MAPFILE")
		}
	case "getopts":
		if len(args) > 1 {
			names = append(names, args[1].Lit)
		}
	case "printf":
		for i := 0; i+1 < len(args); i++ {
			if args[i].Lit == "-v" {
				names = append(names, args[i+1].Lit)
			}
		}
	}
	return names
}
