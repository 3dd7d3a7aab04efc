package shell

import (
	"path"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/paths"
)

// Actions of a [Finding].
const (
	ActionBlock   = "block"
	ActionConfirm = "confirm"
)

// Finding is one rule a command line triggers.
type Finding struct {
	Rule    string // a stable rule code, listed in the package documentation
	Action  string // ActionBlock or ActionConfirm
	Command string // a short rendering of the command, with secret-looking values masked
	Detail  string // what triggered the rule, for a person
	// Local marks a confirmation about the project itself (a destructive
	// git command inside the work tree): a person may well want it while
	// writing source, so it does not make the command a ship action.
	Local bool
}

// Context is what the caller knows about the place a command line runs.
// Paths are absolute; an empty one is unknown, and the rules then assume
// the worst.
type Context struct {
	Home, Cwd, ProjectRoot string
	// Dirty is set when the git work tree has uncommitted changes.
	Dirty bool
	// DirtyProbe, when set, is asked instead of Dirty, and only by a rule
	// that needs to know (git reset --hard, checkout, restore, switch):
	// probing the work tree costs far more than reading a command.
	DirtyProbe func() bool
}

func (cl *classifier) dirty() bool {
	if cl.ctx.DirtyProbe != nil {
		return cl.ctx.DirtyProbe()
	}
	return cl.ctx.Dirty
}

// init makes cl a classifier for a's commands in ctx (paths cleaned, the
// line scanned). A classifier lives for one Classify or GateSelf, on its
// stack.
func (cl *classifier) init(a *Analysis, ctx Context) {
	*cl = classifier{ctx: ctx}
	cl.ctx.Home = cleanAbs(ctx.Home)
	cl.ctx.Cwd = cleanAbs(ctx.Cwd)
	cl.ctx.ProjectRoot = cleanAbs(ctx.ProjectRoot)
	cl.lineFacts = a.lineFacts()
}

// lineFacts is scan's answer for a, worked out once per analysis: the guard
// and the policy each classify the same line.
func (a *Analysis) lineFacts() lineFacts {
	a.scanOnce.Do(func() {
		var cl classifier
		cl.scan(a)
		a.scanned = cl.lineFacts
	})
	return a.scanned
}

// Classify applies the exec rules to every command of a.
func Classify(a *Analysis, ctx Context) []Finding {
	if a == nil {
		return nil
	}
	var cl classifier
	cl.init(a, ctx)
	sinks := a.sinks()
	for i := range a.Commands {
		c := &a.Commands[i]
		cl.io = &sinks[i]
		if len(c.Argv) > 0 && c.Argv[0].Dynamic {
			if r, ok := cl.resolve(c); ok {
				c, cl.io = r, nil
			}
		}
		for i, cwd := range cl.cwds(c) {
			cl.cur, cl.again = cwd, i > 0
			cl.command(c)
		}
	}
	return cl.out
}

// GateSelf is Classify's gate-self findings alone: the guard's question,
// without the rules the tool policy asks about.
func GateSelf(a *Analysis, ctx Context) []Finding {
	if a == nil {
		return nil
	}
	var cl classifier
	cl.init(a, ctx)
	for i := range a.Commands {
		c := &a.Commands[i]
		if len(c.Argv) > 0 && c.Argv[0].Dynamic {
			if r, ok := cl.resolve(c); ok {
				c = r
			}
		}
		cl.gateSelf(c)
	}
	var out []Finding
	for _, f := range cl.out {
		if f.Rule == "gate-self" {
			out = append(out, f)
		}
	}
	return out
}

// cwds are the absolute folders c may run in ("" for one not known).
func (cl *classifier) cwds(c *Command) []string {
	if len(c.Dirs) == 0 {
		cl.start[0] = cl.ctx.Cwd
		return cl.start[:]
	}
	if len(cl.lastDirs) > 0 && &cl.lastDirs[0] == &c.Dirs[0] && len(cl.lastDirs) == len(c.Dirs) {
		return cl.lastCwds // the commands after one cd share its Dirs
	}
	defer func() { cl.lastDirs = c.Dirs }()
	out := make([]string, 0, len(c.Dirs))
	for _, d := range c.Dirs {
		abs := ""
		switch {
		case d == "?":
		case d == "":
			abs = cl.ctx.Cwd
		case d == "~" || strings.HasPrefix(d, "~/"):
			if cl.ctx.Home != "" {
				abs = path.Join(cl.ctx.Home, d[1:])
			}
		case strings.HasPrefix(d, "/"):
			abs = path.Clean(d)
		case cl.ctx.Cwd != "":
			abs = path.Join(cl.ctx.Cwd, d)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	cl.lastCwds = out
	return out
}

// scan gathers what the rules need from the whole line: whether the
// working directory moves, the names piagent's binaries are copied or
// built to, literal variable values, and whether piagent is mentioned.
func (cl *classifier) scan(a *Analysis) {
	cl.vars = map[string][]Word{}
	for _, as := range a.Assignments {
		cl.vars[as.Name] = append(cl.vars[as.Name], as.Value)
		if containsFold(as.Value.Lit, "piagent") {
			cl.mentionsPiagent = true
		}
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		for _, w := range c.Argv {
			if containsFold(w.Lit, "piagent") {
				cl.mentionsPiagent = true
			}
		}
		if containsFold(c.Opaque, "piagent") {
			cl.mentionsPiagent = true
		}
		if len(c.Argv) == 0 || c.Argv[0].Dynamic {
			continue
		}
		name := progName(c.Argv[0].Lit)
		switch name {
		case "cp", "ln", "install", "mv", "rsync", "link":
			_, pos := parseGNU(c.Argv[1:], opts{short: "tSgmo", long: " target-directory suffix "})
			if len(pos) < 2 {
				continue
			}
			for _, src := range pos[:len(pos)-1] {
				if containsFold(src.Lit, "piagent") {
					cl.addAlias(pos[len(pos)-1].Lit)
				}
			}
		case "go":
			if len(c.Argv) < 2 || (c.Argv[1].Lit != "build" && c.Argv[1].Lit != "install") {
				continue
			}
			out := ""
			piagent := false
			for j := 2; j < len(c.Argv); j++ {
				l := c.Argv[j].Lit
				if l == "-o" && j+1 < len(c.Argv) {
					out = c.Argv[j+1].Lit
					j++
					continue
				}
				if v, ok := strings.CutPrefix(l, "-o="); ok {
					out = v
				}
				if !strings.HasPrefix(l, "-") && containsFold(l, "piagent") {
					piagent = true
				}
			}
			if piagent && out != "" {
				cl.addAlias(out)
			}
		}
	}
}

func (cl *classifier) addAlias(dest string) {
	if cl.aliases == nil {
		cl.aliases = map[string]bool{}
	}
	if n := progName(dest); n != "" && n != "." && n != ".." {
		cl.aliases[n] = true
	}
}

// resolve replaces a program word that is only a variable ($p, ${p})
// with the variable's literal value, when every assignment to it in the
// line gives the same literal value. The value is split on blanks.
func (cl *classifier) resolve(c *Command) (*Command, bool) {
	lit := c.Argv[0].Lit
	name := ""
	switch {
	case strings.HasPrefix(lit, "${") && strings.HasSuffix(lit, "}"):
		name = lit[2 : len(lit)-1]
	case strings.HasPrefix(lit, "$"):
		name = lit[1:]
	}
	if name == "" || !isAssignment(Word{Lit: name + "="}) {
		return nil, false
	}
	vals := cl.vars[name]
	if len(vals) == 0 || len(cl.vars["IFS"]) > 0 {
		return nil, false
	}
	for _, v := range vals {
		if v.Dynamic || v.Lit != vals[0].Lit {
			return nil, false
		}
	}
	fields := strings.Fields(vals[0].Lit)
	if len(fields) == 0 {
		return nil, false
	}
	r := *c
	r.Argv = make([]Word, 0, len(fields)+len(c.Argv)-1)
	for _, f := range fields {
		r.Argv = append(r.Argv, Word{Lit: f})
	}
	r.Argv = append(r.Argv, c.Argv[1:]...)
	r.Name = baseName(fields[0])
	return &r, true
}

func cleanAbs(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") {
		return ""
	}
	return path.Clean(p)
}

type classifier struct {
	ctx   Context
	cur   string // the folder the command being classified runs in ("" unknown)
	again bool   // the same command from another folder: only the rules on paths
	io    *sink  // the command's reads and writes, when worked out already
	start [1]string
	// lastDirs and lastCwds remember the last Command.Dirs resolved
	lastDirs, lastCwds []string
	depth              int // opaque code re-read as shell (hidesGate)
	out                []Finding

	lineFacts
}

// lineFacts is what the rules need from the whole line (scan); read only
// once made.
type lineFacts struct {
	vars            map[string][]Word // literal assignments, by name
	aliases         map[string]bool   // names piagent was copied or built to
	mentionsPiagent bool
}

func (cl *classifier) add(c *Command, rule, action, detail string) {
	cl.addFinding(c, Finding{Rule: rule, Action: action, Detail: detail})
}

func (cl *classifier) addFinding(c *Command, f Finding) {
	f.Command = render(c)
	for _, g := range cl.out {
		if g.Rule == f.Rule && g.Command == f.Command && g.Detail == f.Detail {
			return
		}
	}
	cl.out = append(cl.out, f)
}

func (cl *classifier) block(c *Command, rule, detail string) {
	cl.add(c, rule, ActionBlock, detail)
}

func (cl *classifier) confirm(c *Command, rule, detail string) {
	cl.add(c, rule, ActionConfirm, detail)
}

// confirmLocal is a confirmation about the project itself (Finding.Local).
func (cl *classifier) confirmLocal(c *Command, rule, detail string) {
	cl.addFinding(c, Finding{Rule: rule, Action: ActionConfirm, Detail: detail, Local: true})
}

func (cl *classifier) command(c *Command) {
	if !cl.again {
		cl.gateSelf(c)
		cl.devices(c)
	}
	if len(c.Argv) == 0 || c.Argv[0].Dynamic {
		return
	}
	if cl.again {
		switch name := progName(c.Argv[0].Lit); name {
		case "rm", "rimraf":
			cl.rm(c, c.Argv[1:])
		case "find":
			cl.findDelete(c)
		case "chmod", "chown", "chgrp":
			cl.perm(c, name, c.Argv[1:])
		case "rsync":
			cl.rsyncDelete(c, c.Argv[1:])
		}
		cl.scripts(c)
		return
	}
	if c.Function != "" && c.Name == c.Function && (c.Context == "pipeline" || c.Background) {
		cl.block(c, "fork-bomb", "function "+c.Function+" starts copies of itself")
	}
	name := progName(c.Argv[0].Lit)
	args := c.Argv[1:]
	switch name {
	case "rm", "rimraf":
		cl.rm(c, args)
	case "find":
		cl.findDelete(c)
	case "shred", "wipe":
		// device targets are caught by devices
	case "mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs", "mkexfatfs", "newfs":
		cl.block(c, "mkfs", name+" creates a file system, erasing the device")
	case "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk":
		if !hasAny(args, "-l", "--list", "print", "-p", "--print") {
			cl.block(c, "mkfs", name+" rewrites a partition table")
		}
	case "chmod", "chown", "chgrp":
		cl.perm(c, name, args)
	case "git":
		cl.git(c, args)
	case "docker", "podman", "nerdctl", "docker-compose", "podman-compose":
		cl.docker(c, name, args)
	case "npm", "pnpm", "yarn", "bun":
		cl.publish(c, name, args)
	case "cargo":
		if sub := firstOperand(args); sub == "publish" || sub == "yank" || sub == "owner" {
			cl.confirm(c, "package-publish", "cargo "+sub+" changes a public registry")
		}
	case "twine", "poetry", "uv", "flit", "hatch", "gem", "maturin", "goreleaser", "dotnet", "mvn", "gradle", "./gradlew", "gradlew":
		cl.publishOther(c, name, args)
	case "gh":
		cl.gh(c, args)
	case "terraform", "tofu", "terragrunt", "pulumi", "cdk", "cdktf":
		cl.infra(c, name, args)
	case "kubectl", "oc", "kubecolor":
		cl.kubectl(c, args)
	case "ps":
		cl.psEnviron(c, args)
	case "helm":
		if sub := firstOperand(args); helmWrites[sub] {
			cl.confirm(c, "helm-write", "helm "+sub+" changes a cluster")
		}
	case "curl":
		if why := curlWrite(args); why != "" {
			cl.confirm(c, "http-write", why)
		}
	case "wget":
		if why := wgetWrite(args); why != "" {
			cl.confirm(c, "http-write", why)
		}
	case "http", "https", "xh", "xhs":
		cl.httpie(c, args)
	case "aws":
		cl.aws(c, args)
	case "gcloud", "az":
		cl.gcloud(c, name, args)
	case "vercel", "netlify", "fly", "flyctl", "firebase", "wrangler", "railway", "serverless", "sls", "heroku", "surge":
		cl.deploy(c, name, args)
	case "gpg", "gpg2":
		if hasAny(args, "--export-secret-keys", "--export-secret-subkeys", "--export-secret-key") {
			cl.block(c, "secret-export", name+" exports secret keys")
		}
	case "scp", "rsync":
		cl.remoteCopy(c, name, args)
		if name == "rsync" {
			cl.rsyncDelete(c, args)
		}
	default:
		if strings.HasPrefix(name, "mkfs") {
			cl.block(c, "mkfs", name+" creates a file system, erasing the device")
		}
	}
	cl.scripts(c)
}

// scripts asks before a shell or an interpreter runs a script from outside
// the project: its content is not read here.
func (cl *classifier) scripts(c *Command) {
	script := scriptOperand(c, progName(c.Argv[0].Lit))
	if script == nil || c.Opaque != "" {
		return
	}
	if abs := cl.absOf(script.Lit); script.Expands || abs == "" || cl.ctx.ProjectRoot == "" || abs == cl.ctx.ProjectRoot || !paths.Within(cl.ctx.ProjectRoot, abs) {
		cl.confirm(c, "opaque-shell", "runs the script "+display(script.Lit)+", which is outside the project, so piagent cannot read it before it runs")
	}
}

// scriptOperand is the script file a shell or an interpreter runs, when it
// runs one (not -c code, a module, or standard input).
func scriptOperand(c *Command, name string) *Word {
	var o opts
	switch {
	case shells[name]:
		o = opts{short: "oO", long: " rcfile init-file "}
		for _, a := range c.Argv[1:] {
			if !a.Dynamic && len(a.Lit) > 1 && a.Lit[0] == '-' && a.Lit[1] != '-' && strings.ContainsAny(a.Lit[1:], "c") {
				return nil
			}
		}
	default:
		var ok bool
		if o, ok = interpreters[name]; !ok || len(codeArgs(c)) > 0 {
			return nil
		}
		if hasAny(c.Argv[1:], "-m", "-e", "-E", "-c", "-r", "--eval", "-p", "--print", "-v", "--version", "-V", "-h", "--help") {
			return nil
		}
	}
	_, pos := parseGNU(c.Argv[1:], o)
	if len(pos) == 0 || pos[0].Lit == "-" || shells[name] && hasAny(c.Argv[1:], "-s") {
		// the script comes from standard input: a file redirected there
		for i := len(c.Redirects) - 1; i >= 0; i-- {
			if r := c.Redirects[i]; r.Op == "<" && (r.FD == "" || r.FD == "0") {
				return &c.Redirects[i].Target
			}
		}
		return nil
	}
	return &pos[0]
}

func hasAny(args []Word, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a.Lit == n {
				return true
			}
		}
	}
	return false
}

func firstOperand(args []Word) string {
	for _, a := range args {
		if a.Dynamic {
			return "$"
		}
		if !strings.HasPrefix(a.Lit, "-") {
			return a.Lit
		}
	}
	return ""
}

// operandsOf returns the words that do not start with "-" (a rough cut
// for CLIs whose option values rarely matter).
func operandsOf(args []Word) []string {
	var out []string
	for _, a := range args {
		if a.Dynamic {
			out = append(out, "$")
			continue
		}
		if a.Lit == "--" {
			break
		}
		if !strings.HasPrefix(a.Lit, "-") {
			out = append(out, a.Lit)
		}
	}
	return out
}

// --- destructive -----------------------------------------------------

func (cl *classifier) rm(c *Command, args []Word) {
	flags, pos := parseGNU(args, opts{})
	if !has(flags, "-r", "-R", "--recursive") && c.Name != "rimraf" {
		return
	}
	cl.deleteTrees(c, "rm -r", pos)
}

// deleteTrees decides a recursive delete of targets: blocked for the
// system, the home folder and what holds the project, and for anything
// outside the project and the temporary folder; confirmed for the project
// itself and where the folder is not known; allowed inside the project and
// in the temporary folder.
func (cl *classifier) deleteTrees(c *Command, what string, targets []Word) {
	for _, t := range targets {
		switch pl, why := cl.placeOf(c, t); pl {
		case placeRoot:
			cl.block(c, "rm-root", what+" of "+why)
			return
		case placeOutside:
			cl.block(c, "rm-outside", what+" of "+why+", outside the project and the temporary folder")
			return
		case placeProject:
			cl.confirmLocal(c, "rm-project", what+" of "+why+", the project itself")
		case placeUnknown:
			cl.confirm(c, "rm-unknown", what+" of "+why+" in a folder not known before the line runs")
		}
	}
}

// place is what a path names, for the rules that delete or replace trees.
type place int

const (
	placeInside  place = iota // below the project root, or in the temporary folder
	placeProject              // the project root itself, or everything in it
	placeOutside              // anywhere else: the home folder's contents, other projects
	placeRoot                 // /, a top-level folder, home, an ancestor of home or the project
	placeUnknown              // a relative path where the folder is not known
)

// tempRoots are the temporary folders: what is below them is scratch.
var tempRoots = []string{"/tmp", "/var/tmp", "/private/tmp", "/private/var/folders", "/dev/shm"}

// placeOf classifies the tree t names, with a short rendering for the
// reason. A glob that can list everything in a folder names the folder.
func (cl *classifier) placeOf(c *Command, t Word) (place, string) {
	if t.Expands {
		if c != nil && c.Outer != nil && strings.Contains(t.Lit, "{}") {
			if why := cl.findReason(c.Outer, true); why != "" {
				return placeRoot, why
			}
			roots, _ := findParts(c.Outer.Argv[1:])
			worst, why := placeInside, ""
			for _, r := range roots {
				pl, w := cl.placeOf(nil, r)
				if pl == placeProject {
					pl = placeInside // a selective find below the project root
				}
				if pl > worst {
					worst, why = pl, "what find matches under "+w
				}
			}
			return worst, why
		}
		lit, ok := homeVar(t.Lit)
		if !ok && freshTempPattern(t.Pattern) {
			return placeInside, "" // a name mktemp just made ($TMPDIR is /tmp already: Word)
		}
		if !ok {
			return placeRoot, "a path computed at run time"
		}
		t = Word{Lit: lit, Dynamic: strings.ContainsAny(lit, "*?[{")}
		if t.Dynamic {
			t.Pattern = lit
		}
	}
	p, child := t.Lit, false
	if t.Dynamic {
		dir, rest := globDir(t)
		if !broadGlob(rest) && !cl.holdsRoot(dir, rest) {
			child = true // names some entries of dir, not all
		}
		p = dir
	}
	if !child && cl.isRoot(p, t.Dynamic, false) {
		if t.Dynamic {
			return placeRoot, "everything in " + display(p)
		}
		return placeRoot, display(p)
	}
	abs := cl.absOf(p)
	switch {
	case abs == "" && t.Dynamic && !child:
		return placeRoot, "everything in a folder not known before the line runs"
	case abs == "":
		return placeUnknown, display(t.Lit)
	case child && abs == "/":
		return placeRoot, display(t.Lit)
	case child:
		abs = path.Join(abs, "x")
	}
	root := cl.ctx.ProjectRoot
	switch {
	case root != "" && !strings.EqualFold(abs, root) && paths.WithinFold(abs, root):
		return placeRoot, display(t.Lit) + ", which holds the project"
	case root != "" && strings.EqualFold(abs, root):
		return placeProject, display(t.Lit)
	case root != "" && paths.WithinFold(root, abs):
		return placeInside, ""
	}
	if !paths.Within(cl.ctx.Home, abs) {
		// the home folder is never scratch, wherever it is
		if cl.inTemp(abs) {
			return placeInside, ""
		}
	}
	return placeOutside, display(t.Lit)
}

// absOf resolves a path as written against the home folder and the folder
// the command runs in; "" when either is needed and not known.
func (cl *classifier) absOf(p string) string {
	switch {
	case strings.HasPrefix(p, "/"):
		return path.Clean(p)
	case p == "~" || strings.HasPrefix(p, "~/"):
		if cl.ctx.Home == "" {
			return ""
		}
		return path.Join(cl.ctx.Home, p[1:])
	case strings.HasPrefix(p, "~"):
		return ""
	case cl.cur == "":
		return ""
	}
	return path.Join(cl.cur, p)
}

func (cl *classifier) rootReasonIn(c *Command, t Word, project bool) string {
	if t.Expands {
		if c != nil && c.Outer != nil && strings.Contains(t.Lit, "{}") {
			return cl.findReason(c.Outer, project)
		}
		lit, ok := homeVar(t.Lit)
		if !ok {
			return "a path computed at run time"
		}
		t = Word{Lit: lit, Dynamic: strings.ContainsAny(lit, "*?[{")}
		if t.Dynamic {
			t.Pattern = lit
		}
	}
	if t.Dynamic {
		dir, rest := globDir(t)
		if (broadGlob(rest) || cl.holdsRoot(dir, rest)) && cl.isRoot(dir, true, project) {
			return "everything in " + display(dir)
		}
		return ""
	}
	if cl.isRoot(t.Lit, false, project) {
		return display(t.Lit)
	}
	return ""
}

func display(p string) string {
	if p == "" {
		return "''"
	}
	if len(p) > 80 {
		return p[:80] + "…"
	}
	return p
}

// homeVar rewrites a leading $HOME or ${HOME} to ~, when nothing else in
// the word expands.
func homeVar(lit string) (string, bool) {
	for _, v := range []string{"${HOME}", "$HOME"} {
		if rest, ok := strings.CutPrefix(lit, v); ok {
			if strings.ContainsAny(rest, "$`") || strings.Contains(rest, "<(") || strings.Contains(rest, ">(") {
				return "", false
			}
			if rest != "" && rest[0] != '/' {
				return "", false // $HOMEX
			}
			return "~" + rest, true
		}
	}
	return "", false
}

// broadGlob reports whether the glob part of a word can match any name:
// nothing literal is left once glob characters, dots and slashes are
// removed (`*`, `.*`, `*/`, `[a-z]*`), unlike `*.egg-info` or `*/build`.
func broadGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*', '?', '.', '/':
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		case '\\':
			return false
		default:
			return false
		}
	}
	return true
}

// globDir is the directory a glob word lists: the literal part before the
// first glob character, cut at its last slash; and the pattern after it.
func globDir(t Word) (string, string) {
	p := t.Pattern
	var prefix []byte
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			i++
			prefix = append(prefix, p[i])
			continue
		}
		if c == '*' || c == '?' || c == '[' {
			break
		}
		prefix = append(prefix, c)
	}
	s := string(prefix)
	j := strings.LastIndexByte(s, '/')
	// the pattern after the directory: skip as many pattern bytes as the
	// literal prefix took (escapes make the pattern longer)
	k, n := 0, 0
	for k < len(p) && n <= j {
		if p[k] == '\\' {
			k++
		}
		k++
		n++
	}
	rest := p[k:]
	if j < 0 {
		rest = p
	}
	switch {
	case j < 0:
		return ".", rest
	case j == 0:
		return "/", rest
	}
	return s[:j], rest
}

// isRoot reports whether p is /, a top-level directory, the home
// directory, the project root, or an ancestor of home or the project.
// contents is set when p is the directory a glob lists (so `*` in the
// project root counts, while `*` in a subdirectory does not). Without
// project, the project root and the working directory do not count.
func (cl *classifier) isRoot(p string, contents, project bool) bool {
	if p == "" {
		return false
	}
	home := cl.ctx.Home
	var abs string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		rest := path.Clean("/" + p[1:])
		if rest == "/" {
			return true
		}
		if home == "" {
			return false
		}
		abs = path.Join(home, rest)
	case strings.HasPrefix(p, "~"):
		_, rest, _ := strings.Cut(p, "/")
		if path.Clean("/"+rest) == "/" {
			return true // ~user
		}
		return false
	case strings.HasPrefix(p, "/"):
		abs = path.Clean(p)
	default:
		rel := path.Clean(p)
		if rel == "." || rel == ".." || strings.Trim(rel, "./") == "" {
			if !project && rel == "." && !contents {
				if cl.cur == "" {
					return false
				}
				return cl.isRoot(cl.cur, false, project)
			}
			if rel == "." && contents {
				if cl.cur == "" {
					return project
				}
				return cl.isRoot(cl.cur, false, project)
			}
			return true
		}
		if cl.cur == "" {
			return false
		}
		abs = path.Join(cl.cur, rel)
	}
	if abs == "/" || strings.Count(abs, "/") == 1 {
		return true
	}
	for _, r := range []string{home, cl.projectIf(project)} {
		if r == "" {
			continue
		}
		if strings.EqualFold(abs, r) || paths.WithinFold(abs, r) {
			return true
		}
	}
	return false
}

// holdsRoot reports whether dir is /, or a strict ancestor of home or the
// project whose glob rest can match the next name on the way there.
func (cl *classifier) holdsRoot(dir, rest string) bool {
	var abs string
	switch {
	case strings.HasPrefix(dir, "/"):
		abs = path.Clean(dir)
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		if cl.ctx.Home == "" {
			return false
		}
		abs = path.Join(cl.ctx.Home, dir[1:])
	default:
		if cl.cur == "" {
			return strings.Trim(path.Clean(dir), "./") == "" && path.Clean(dir) != "."
		}
		abs = path.Join(cl.cur, dir)
	}
	if abs == "/" {
		return true
	}
	first, _, _ := strings.Cut(rest, "/")
	for _, r := range []string{cl.ctx.Home, cl.ctx.ProjectRoot} {
		if !paths.WithinFold(abs, r) || strings.EqualFold(abs, r) {
			continue
		}
		next, _, _ := strings.Cut(r[len(abs)+1:], "/")
		if ok, err := path.Match(first, next); ok || err != nil {
			return true
		}
	}
	return false
}

func (cl *classifier) projectIf(project bool) string {
	if project {
		return cl.ctx.ProjectRoot
	}
	return ""
}

// findReason says why a find's matches include a root, or "".
func (cl *classifier) findReason(find *Command, project bool) string {
	roots, expr := findParts(find.Argv[1:])
	if selectiveFind(expr) {
		return ""
	}
	for _, r := range roots {
		if why := cl.rootReasonIn(nil, r, project); why != "" {
			return "everything under " + why
		}
	}
	return ""
}

var findTests = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-empty": true, "-mtime": true,
	"-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true, "-newer": true,
	"-size": true, "-inum": true, "-samefile": true, "-links": true, "-user": true, "-uid": true,
	"-group": true, "-gid": true, "-perm": true, "-newermt": true,
}

// selectiveFind reports whether a find expression narrows what it matches
// by name, path, time or size (with no -o or negation that could undo it).
func selectiveFind(expr []Word) bool {
	sel := false
	for i := 0; i < len(expr); i++ {
		s := expr[i].Lit
		switch s {
		case "-exec", "-execdir", "-ok", "-okdir":
			for i < len(expr) && expr[i].Lit != ";" && expr[i].Lit != "+" {
				i++
			}
		case "-o", "-or", "!", "-not", ",":
			return false
		}
		if findTests[s] {
			sel = true
		}
	}
	return sel
}

func (cl *classifier) findDelete(c *Command) {
	roots, expr := findParts(c.Argv[1:])
	if !hasAny(expr, "-delete") {
		return
	}
	if why := cl.findReason(c, false); why != "" {
		cl.block(c, "find-delete-root", "find -delete of "+why)
		return
	}
	if len(roots) == 0 {
		roots = []Word{{Lit: "."}}
	}
	selective := selectiveFind(expr)
	for _, r := range roots {
		switch pl, why := cl.placeOf(c, r); pl {
		case placeRoot:
			cl.block(c, "find-delete-root", "find -delete under "+why)
			return
		case placeOutside:
			cl.block(c, "rm-outside", "find -delete under "+why+", outside the project and the temporary folder")
			return
		case placeProject:
			if !selective {
				cl.confirmLocal(c, "rm-project", "find -delete of everything under "+why+", the project itself")
			}
		case placeUnknown:
			cl.confirm(c, "rm-unknown", "find -delete under "+why+" in a folder not known before the line runs")
		}
	}
}

// harmlessDevices may be written freely.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty",
		"/dev/random", "/dev/urandom", "/dev/full", "/dev/console":
		return true
	}
	for _, pre := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/mqueue/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// devices blocks writes to block devices: redirections, dd of=, tee, cp,
// shred, truncate … of /dev/….
func (cl *classifier) devices(c *Command) {
	s := cl.io
	if s == nil {
		s = &sink{}
		commandIO(c, s)
	}
	for _, w := range s.writes {
		p := path.Clean("/" + strings.TrimPrefix(w.Lit, "/"))
		if !strings.HasPrefix(w.Lit, "/dev/") || harmlessDevice(p) {
			continue
		}
		cl.block(c, "device-write", "writes the device "+display(p))
		return
	}
	if c.Name == "dd" {
		for _, a := range c.Argv[1:] {
			if strings.HasPrefix(a.Lit, "of=") && a.Expands {
				cl.block(c, "device-write", "dd writes to a path computed at run time")
				return
			}
		}
	}
}

func (cl *classifier) perm(c *Command, name string, args []Word) {
	recursive := false
	for _, a := range args {
		if a.Dynamic || !strings.HasPrefix(a.Lit, "-") {
			continue
		}
		if a.Lit == "--recursive" || !strings.HasPrefix(a.Lit, "--") && strings.ContainsRune(a.Lit, 'R') {
			recursive = true
		}
	}
	if !recursive {
		return
	}
	mode, targets := permArgs(name, args)
	if name == "chmod" && mode != nil && worldWritable(mode.Lit) {
		cl.block(c, "chmod-world-writable", "chmod -R "+display(mode.Lit)+" makes files writable by every user")
		return
	}
	for _, t := range targets {
		if why := cl.rootReasonIn(c, t, false); why != "" {
			rule := "chmod-root"
			if name != "chmod" {
				rule = "chown-root"
			}
			cl.block(c, rule, name+" -R of "+why)
			return
		}
	}
}

// worldWritable reports whether a chmod mode grants write to others.
func worldWritable(mode string) bool {
	if mode == "" {
		return false
	}
	if strings.Trim(mode, "01234567") == "" {
		return (mode[len(mode)-1]-'0')&2 != 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := 0
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			i++
		}
		who := clause[:i]
		for i < len(clause) {
			op := clause[i]
			j := i + 1
			for j < len(clause) && strings.IndexByte("+-=", clause[j]) < 0 {
				j++
			}
			perms := clause[i+1 : j]
			if (op == '+' || op == '=') && strings.ContainsAny(perms, "w") &&
				(strings.ContainsAny(who, "oa")) {
				return true
			}
			i = j
		}
	}
	return false
}

func (cl *classifier) git(c *Command, args []Word) {
	i, alias := gitGlobal(args)
	if alias {
		cl.confirm(c, "git-push", "git runs an alias defined on the command line")
	}
	if i >= len(args) {
		return
	}
	if args[i].Dynamic {
		cl.confirm(c, "git-push", "the git subcommand is computed at run time")
		return
	}
	sub := args[i].Lit
	rest := args[i+1:]
	switch sub {
	case "push", "send-email":
		flags, _ := parseGNU(rest, opts{short: "o", long: " repo receive-pack exec push-option signed recurse-submodules force-with-lease "})
		if sub == "push" && has(flags, "-n", "--dry-run") {
			return
		}
		cl.confirm(c, "git-push", "git "+sub+" sends commits to a remote")
	case "clean":
		flags, _ := parseGNU(rest, opts{short: "e", long: " exclude "})
		if has(flags, "-n", "--dry-run") {
			return
		}
		switch {
		case has(flags, "-f", "--force") && has(flags, "-d") && has(flags, "-x", "-X"):
			cl.block(c, "git-clean-force", "git clean -fdx deletes every untracked and ignored file")
		case has(flags, "-f", "--force"):
			// Untracked files are in no commit: a person decides.
			cl.confirmLocal(c, "git-clean", "git clean -f deletes untracked files, which no commit holds")
		}
	case "reset":
		switch {
		case hasAny(rest, "--hard") && cl.dirty():
			cl.confirmLocal(c, "git-reset-hard", "git reset --hard discards the uncommitted changes in the work tree")
		case hasAny(rest, "--hard"):
			cl.confirmLocal(c, "git-reset-hard", "git reset --hard moves the branch and can leave commits behind")
		}
	case "switch":
		if hasAny(rest, "--discard-changes", "-f", "--force") && cl.dirty() {
			cl.confirmLocal(c, "git-discard", "git switch --discard-changes overwrites the uncommitted changes in the work tree")
		}
	case "stash":
		if op := firstOperand(rest); op == "clear" || op == "drop" {
			cl.confirmLocal(c, "git-stash-drop", "git stash "+op+" throws away stashed changes, which no branch holds")
		}
	case "branch":
		flags, _ := parseGNU(rest, opts{})
		if has(flags, "-D") || has(flags, "-d", "--delete") && has(flags, "-f", "--force") {
			cl.confirmLocal(c, "git-branch-delete", "git branch -D deletes a branch whether or not it was merged")
		}
	case "reflog":
		if firstOperand(rest) == "expire" {
			cl.confirmLocal(c, "git-history-prune", "git reflog expire forgets where branches were, the way back to lost commits")
		}
	case "gc", "prune":
		for _, a := range rest {
			if a.Lit == "--prune=now" || a.Lit == "--prune=all" || sub == "prune" && a.Lit == "--expire=now" {
				cl.confirmLocal(c, "git-history-prune", "git "+sub+" deletes unreachable commits now")
			}
		}
	case "checkout", "restore":
		flags, pos := parseGNU(rest, opts{short: "bBs", long: " source "})
		if sub == "restore" && has(flags, "-S", "--staged") && !has(flags, "-W", "--worktree") {
			return
		}
		discard := sub == "checkout" && has(flags, "-f", "--force")
		for _, p := range pos {
			// a folder's worth of changes: ".", ":/", "*", "src/"
			if p.Lit == "." || p.Lit == ":/" || p.Lit == "*" || p.Lit == ":/*" || strings.HasSuffix(p.Lit, "/") || p.Dynamic {
				discard = true
			}
		}
		if discard && cl.dirty() {
			cl.confirmLocal(c, "git-discard", "git "+sub+" overwrites the uncommitted changes in the work tree")
		}
	}
}

func (cl *classifier) docker(c *Command, name string, args []Word) {
	ops := operandsOf(dockerOperands(args))
	if name == "docker-compose" || name == "podman-compose" {
		ops = append([]string{"compose"}, ops...)
	}
	if len(ops) == 0 {
		return
	}
	at := func(i int) string {
		if i < len(ops) {
			return ops[i]
		}
		return ""
	}
	switch {
	case at(0) == "push" || at(1) == "push" && (at(0) == "image" || at(0) == "manifest"):
		cl.confirm(c, "docker-push", name+" push publishes an image")
	case at(0) == "buildx" && at(1) == "build" && hasAny(args, "--push"):
		cl.confirm(c, "docker-push", name+" buildx build --push publishes an image")
	case at(1) == "prune" || at(0) == "prune":
		cl.confirm(c, "docker-prune", name+" "+strings.Join(ops[:min(2, len(ops))], " ")+" deletes containers, images or volumes")
	case at(0) == "volume" && (at(1) == "rm" || at(1) == "remove"):
		cl.confirm(c, "docker-prune", name+" volume rm deletes volumes and their data")
	case at(0) == "compose" && at(1) == "down" && (hasAny(args, "-v", "--volumes")):
		cl.confirm(c, "docker-prune", name+" compose down -v deletes the project's volumes")
	}
}

// dockerOperands skips docker's global options.
func dockerOperands(args []Word) []Word {
	o := opts{short: "cHl", long: " config context host log-level tlscacert tlscert tlskey "}
	return args[o.skip(args):]
}

func (cl *classifier) publish(c *Command, name string, args []Word) {
	ops := operandsOf(args)
	if len(ops) == 0 {
		return
	}
	sub := ops[0]
	if name == "yarn" && sub == "npm" && len(ops) > 1 {
		sub = ops[1]
		if sub == "tag" && len(ops) > 2 && (ops[2] == "add" || ops[2] == "remove") {
			cl.confirm(c, "package-publish", "yarn npm tag changes a public registry")
			return
		}
	}
	switch sub {
	case "publish", "unpublish", "deprecate", "undeprecate":
		cl.confirm(c, "package-publish", name+" "+sub+" changes a public registry")
	case "dist-tag", "dist-tags", "owner", "access", "team":
		if len(ops) > 1 && ops[1] != "ls" && ops[1] != "list" && ops[1] != "get" {
			cl.confirm(c, "package-publish", name+" "+sub+" "+ops[1]+" changes a public registry")
		}
	}
}

func (cl *classifier) publishOther(c *Command, name string, args []Word) {
	ops := operandsOf(args)
	at := func(i int) string {
		if i < len(ops) {
			return ops[i]
		}
		return ""
	}
	ship := false
	switch name {
	case "twine":
		ship = at(0) == "upload"
	case "poetry", "uv", "flit", "hatch", "maturin":
		ship = at(0) == "publish" || name == "maturin" && at(0) == "upload"
	case "gem":
		ship = at(0) == "push" || at(0) == "yank" || at(0) == "owner"
	case "goreleaser":
		ship = at(0) == "release" || at(0) == "" || at(0) == "publish"
		if hasAny(args, "--snapshot", "--skip=publish", "--skip-publish") {
			ship = false
		}
	case "dotnet":
		ship = at(0) == "nuget" && at(1) == "push"
	case "mvn":
		ship = hasAny(args, "deploy", "release:perform", "deploy:deploy")
	default: // gradle
		for _, o := range ops {
			if strings.HasPrefix(o, "publish") {
				ship = true
			}
		}
	}
	if ship {
		cl.confirm(c, "package-publish", name+" publishes a package")
	}
}

// ghRead are gh subcommand verbs that only read.
var ghRead = map[string]bool{
	"view": true, "list": true, "ls": true, "status": true, "diff": true, "checks": true, "download": true,
	"watch": true, "browse": true, "search": true, "checkout": true, "clone": true, "logs": true,
	"verify": true, "help": true, "token": true, "--version": true, "version": true, "completion": true,
}

func (cl *classifier) gh(c *Command, args []Word) {
	ops := operandsOf(args)
	if len(ops) == 0 {
		return
	}
	group := ops[0]
	switch group {
	case "help", "version", "completion", "search", "browse", "status":
		return
	case "api":
		if why := ghAPIWrite(args); why != "" {
			cl.confirm(c, "gh-write", why)
		}
		return
	case "auth":
		if len(ops) > 1 && (ops[1] == "status" || ops[1] == "token") {
			return
		}
	}
	if len(ops) > 1 && ghRead[ops[1]] {
		return
	}
	verb := ""
	if len(ops) > 1 {
		verb = " " + ops[1]
	}
	cl.confirm(c, "gh-write", "gh "+group+verb+" may change GitHub")
}

func ghAPIWrite(args []Word) string {
	flags, _ := parseGNU(args, opts{short: "XfFHpqt", long: " method field raw-field header input jq template preview hostname cache "})
	for _, m := range values(flags, "-X", "--method") {
		if um := strings.ToUpper(m.Lit); um != "GET" && um != "HEAD" {
			return "gh api with method " + display(um)
		}
	}
	if has(flags, "-X", "--method") {
		return ""
	}
	if has(flags, "-f", "-F", "--field", "--raw-field", "--input") {
		return "gh api with fields sends a POST"
	}
	return ""
}

var infraWrites = map[string]bool{
	"apply": true, "destroy": true, "import": true, "taint": true, "untaint": true, "force-unlock": true,
	"up": true, "update": true, "deploy": true, "refresh": true, "cancel": true,
}

func (cl *classifier) infra(c *Command, name string, args []Word) {
	ops := operandsOf(args)
	for i, o := range ops {
		if infraWrites[o] && !(name != "pulumi" && (o == "up" || o == "cancel")) {
			if (name == "terraform" || name == "tofu") && o == "refresh" {
				continue
			}
			cl.confirm(c, "infra-apply", name+" "+o+" changes real infrastructure")
			return
		}
		if o == "state" && i+1 < len(ops) {
			switch ops[i+1] {
			case "rm", "mv", "push", "replace-provider", "delete":
				cl.confirm(c, "infra-apply", name+" state "+ops[i+1]+" changes real infrastructure state")
				return
			}
		}
		if o == "workspace" && i+1 < len(ops) && ops[i+1] == "delete" {
			cl.confirm(c, "infra-apply", name+" workspace delete changes real infrastructure state")
			return
		}
		if o == "stack" && i+1 < len(ops) && (ops[i+1] == "rm" || ops[i+1] == "remove") {
			cl.confirm(c, "infra-apply", name+" stack rm changes real infrastructure state")
			return
		}
		if i >= 1 {
			break
		}
	}
}

var kubectlRead = map[string]bool{
	"get": true, "describe": true, "logs": true, "top": true, "explain": true, "api-resources": true,
	"api-versions": true, "version": true, "cluster-info": true, "diff": true, "auth": true, "wait": true,
	"events": true, "completion": true, "help": true, "port-forward": true, "proxy": true, "options": true,
	"kustomize": true, "plugin": true,
}

func (cl *classifier) kubectl(c *Command, args []Word) {
	o := opts{short: "nsv", long: " namespace context kubeconfig server cluster user token as as-group request-timeout cache-dir certificate-authority client-certificate client-key tls-server-name "}
	_, pos := parseGNU(args, o)
	if len(pos) == 0 {
		return
	}
	if pos[0].Dynamic {
		cl.confirm(c, "kubectl-write", "the kubectl subcommand is computed at run time")
		return
	}
	sub := pos[0].Lit
	if kubectlRead[sub] {
		return
	}
	if sub == "config" {
		if len(pos) < 2 {
			return
		}
		switch pos[1].Lit {
		case "view", "get-contexts", "current-context", "get-clusters", "get-users":
			return
		}
	}
	if sub == "rollout" && len(pos) > 1 && (pos[1].Lit == "status" || pos[1].Lit == "history") {
		return
	}
	cl.confirm(c, "kubectl-write", "kubectl "+display(sub)+" may change a cluster")
}

var helmWrites = map[string]bool{
	"install": true, "upgrade": true, "uninstall": true, "delete": true, "del": true, "rollback": true,
	"push": true, "un": true, "uninstal": true,
}

func curlWrite(args []Word) string {
	flags, _ := parseGNU(args, curlOpts)
	get := has(flags, "-G", "--get")
	for _, m := range values(flags, "-X", "--request") {
		if m.Dynamic {
			return "curl with a method computed at run time"
		}
		if um := strings.ToUpper(m.Lit); um != "GET" && um != "HEAD" && um != "OPTIONS" {
			return "curl -X " + display(um) + " sends a request that can change data"
		}
	}
	if has(flags, "-T", "--upload-file") {
		return "curl uploads a file"
	}
	if has(flags, "-F", "--form", "--form-string") {
		return "curl posts a form"
	}
	if !get && has(flags, "-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--data-urlencode", "--json") {
		return "curl sends a request body (POST)"
	}
	return ""
}

func wgetWrite(args []Word) string {
	flags, _ := parseGNU(args, wgetOpts)
	for _, m := range values(flags, "--method") {
		if um := strings.ToUpper(m.Lit); um != "GET" && um != "HEAD" && um != "OPTIONS" {
			return "wget --method " + display(um) + " sends a request that can change data"
		}
	}
	if has(flags, "--post-data", "--post-file", "--body-data", "--body-file") {
		return "wget sends a request body (POST)"
	}
	return ""
}

func (cl *classifier) httpie(c *Command, args []Word) {
	_, pos := parseGNU(args, opts{short: "abfAvp", long: " auth auth-type output session session-read-only verify cert cert-key print "})
	if len(pos) == 0 {
		return
	}
	m := strings.ToUpper(pos[0].Lit)
	switch m {
	case "POST", "PUT", "PATCH", "DELETE":
		cl.confirm(c, "http-write", c.Name+" "+m+" sends a request that can change data")
		return
	}
	for _, p := range pos[1:] {
		if strings.Contains(p.Lit, "=") || strings.Contains(p.Lit, "@") && !strings.Contains(p.Lit, "://") {
			cl.confirm(c, "http-write", c.Name+" with data items sends a POST")
			return
		}
	}
}

var awsReadPrefixes = []string{"describe-", "list-", "get-", "head-", "tail", "batch-get-", "search-", "lookup-", "scan", "query", "filter-", "validate-", "estimate-", "preview-", "simulate-", "check-", "detect-", "test-", "wait", "help", "ls", "presign", "generate-", "decode-", "assume-", "export-"}

func (cl *classifier) aws(c *Command, args []Word) {
	o := opts{long: " profile region output endpoint-url query color cli-input-json cli-input-yaml ca-bundle cli-read-timeout cli-connect-timeout cli-binary-format "}
	_, pos := parseGNU(args, o)
	if len(pos) < 2 {
		return
	}
	service, op := pos[0].Lit, pos[1].Lit
	if pos[1].Dynamic {
		cl.confirm(c, "cloud-write", "the aws operation is computed at run time")
		return
	}
	if service == "configure" {
		if op == "list" || op == "get" || op == "list-profiles" {
			return
		}
		cl.confirm(c, "cloud-write", "aws configure changes the AWS credentials or settings")
		return
	}
	if service == "s3" {
		switch op {
		case "ls", "presign":
			return
		case "cp", "sync":
			if last := pos[len(pos)-1].Lit; !strings.HasPrefix(last, "s3://") {
				return // a download
			}
		}
		cl.confirm(c, "cloud-write", "aws s3 "+display(op)+" changes a bucket")
		return
	}
	for _, p := range awsReadPrefixes {
		if strings.HasPrefix(op, p) {
			return
		}
	}
	cl.confirm(c, "cloud-write", "aws "+display(service)+" "+display(op)+" may change cloud resources")
}

var cloudVerbs = map[string]bool{
	"create": true, "delete": true, "deploy": true, "update": true, "set": true, "patch": true, "apply": true,
	"import": true, "remove": true, "add": true, "start": true, "stop": true, "restart": true, "reset": true,
	"resize": true, "submit": true, "destroy": true, "publish": true, "upload": true, "rollback": true,
	"enable": true, "disable": true, "attach": true, "detach": true, "move": true, "rename": true, "cp": true,
	"mv": true, "rm": true, "rsync": true, "purge": true, "cancel": true, "run": true, "scale": true,
	"add-iam-policy-binding": true, "remove-iam-policy-binding": true, "set-iam-policy": true, "swap": true,
}

func (cl *classifier) gcloud(c *Command, name string, args []Word) {
	for _, o := range operandsOf(args) {
		if cloudVerbs[o] {
			cl.confirm(c, "cloud-write", name+" "+o+" may change cloud resources")
			return
		}
	}
}

func (cl *classifier) deploy(c *Command, name string, args []Word) {
	ops := operandsOf(args)
	sub := ""
	if len(ops) > 0 {
		sub = ops[0]
	}
	ship := false
	switch name {
	case "vercel":
		switch sub {
		case "", "deploy", "redeploy", "promote", "rollback", "remove", "rm", "alias":
			ship = true
		}
		ship = ship || hasAny(args, "--prod")
	case "netlify", "firebase", "serverless", "sls", "fly", "flyctl", "wrangler":
		switch sub {
		case "deploy", "publish", "remove", "launch", "destroy":
			ship = true
		case "pages", "versions":
			ship = len(ops) > 1 && (ops[1] == "deploy" || ops[1] == "publish")
		}
	case "railway":
		ship = sub == "up" || sub == "deploy" || sub == "down"
	case "heroku":
		ship = strings.HasPrefix(sub, "releases:rollback") || strings.HasPrefix(sub, "apps:destroy") || sub == "container:release" || sub == "container:push"
	case "surge":
		ship = sub != "list" && sub != "whoami" && sub != "login"
	}
	if ship {
		cl.confirm(c, "deploy", name+" deploys or removes a live service")
	}
}

// rsyncDelete decides rsync --delete (and its kin) as a recursive delete
// of what the destination holds: the destination's place decides, and in
// the project a person confirms.
func (cl *classifier) rsyncDelete(c *Command, args []Word) {
	del := false
	for _, a := range args {
		if strings.HasPrefix(a.Lit, "--delete") || a.Lit == "--remove-source-files" {
			del = true
		}
	}
	_, pos := parseGNU(args, opts{short: "eBfT", long: " rsh rsync-path filter exclude include exclude-from include-from files-from temp-dir partial-dir compare-dest copy-dest link-dest chmod chown usermap groupmap out-format log-file password-file port "})
	if !del || len(pos) < 2 {
		return
	}
	dest := pos[len(pos)-1]
	if !dest.Dynamic && remotePath(dest.Lit) {
		return // remote-copy asks already
	}
	switch pl, why := cl.placeOf(c, dest); pl {
	case placeRoot:
		cl.block(c, "rm-root", "rsync --delete into "+why)
	case placeOutside:
		cl.block(c, "rm-outside", "rsync --delete into "+why+", outside the project and the temporary folder")
	case placeInside, placeProject:
		if why == "" {
			if abs := cl.absOf(dest.Lit); abs != "" && (!cl.inTemp(abs) || cl.ctx.ProjectRoot == "" || abs != cl.ctx.ProjectRoot && paths.Within(cl.ctx.ProjectRoot, abs)) {
				cl.confirmLocal(c, "rsync-delete", "rsync --delete deletes what "+display(dest.Lit)+" holds beyond its source")
			}
			return
		}
		cl.confirmLocal(c, "rsync-delete", "rsync --delete deletes what "+why+" holds beyond its source")
	case placeUnknown:
		cl.confirm(c, "rm-unknown", "rsync --delete into "+why+" in a folder not known before the line runs")
	}
}

func (cl *classifier) inTemp(abs string) bool {
	for _, tmp := range tempRoots {
		if abs != tmp && paths.Within(tmp, abs) {
			return true
		}
	}
	return false
}

func (cl *classifier) remoteCopy(c *Command, name string, args []Word) {
	_, pos := parseGNU(args, opts{short: "cFiJloPSe", long: " rsh exclude include exclude-from include-from files-from filter "})
	if len(pos) < 2 {
		return
	}
	if remotePath(pos[len(pos)-1].Lit) {
		cl.confirm(c, "remote-copy", name+" copies files to another machine")
	}
}

// remotePath reports whether an scp/rsync operand names a remote host
// (host:path, user@host:path, rsync://).
func remotePath(s string) bool {
	if strings.HasPrefix(s, "rsync://") || strings.HasPrefix(s, "scp://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	return !strings.Contains(s[:i], "/")
}

// psEnviron blocks ps's BSD option e, which prints each process's
// environment after its command: `ps eww` shows what /proc/*/environ holds
// (Pi's own environment holds its API keys), which a read of it is
// refused for. A value an option takes (-o user, U user, p 1234) is passed
// over; -e (every process) is another option.
func (cl *classifier) psEnviron(c *Command, args []Word) {
	const unixValue, bsdValue = "CGgOopqstUuk", "OopqtUk"
	skip := false
	for _, w := range args {
		if skip || w.Dynamic {
			skip = false
			continue
		}
		s := w.Lit
		switch {
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s, "=")
			switch name {
			case "--format", "--pid", "--ppid", "--user", "--User", "--group", "--Group", "--sort", "--tty", "--sid", "--quick-pid", "--cols", "--columns", "--rows", "--lines", "--width":
				skip = !hasValue
			}
		case strings.HasPrefix(s, "-"):
			for i := 1; i < len(s); i++ {
				if strings.IndexByte(unixValue, s[i]) >= 0 {
					skip = i == len(s)-1
					break
				}
			}
		default:
			if !lettersOnly(s) {
				continue // a pid list, a format's value
			}
			for i := 0; i < len(s); i++ {
				if s[i] == 'e' {
					cl.block(c, "ps-environ", "ps "+s+" prints every process's environment (Pi's holds its API keys), as /proc/*/environ does")
					return
				}
				if strings.IndexByte(bsdValue, s[i]) >= 0 {
					skip = i == len(s)-1
					break
				}
			}
		}
	}
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}
