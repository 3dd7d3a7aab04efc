package shell

import (
	"strings"

	"github.com/piagent/piagent/internal/ops/verbs"
	"github.com/piagent/piagent/internal/shquote"
)

// guardedSubcommands record or change decisions or configuration; an
// agent may not run them (issue 5, "the gate guards itself").
// readOnlySubcommands may run; a non-nil set limits the next word. Both
// come from the one table of piagent's verbs (internal/ops/verbs), with
// cobra's own help and completion read-only beside them.
var guardedSubcommands, readOnlySubcommands = fromTable()

func fromTable() (map[string]bool, map[string]map[string]bool) {
	guarded := map[string]bool{}
	readOnly := map[string]map[string]bool{"help": nil, "completion": nil}
	for _, vs := range [][]verbs.Verb{verbs.Top, verbs.MCP, verbs.Help} {
		for _, v := range vs {
			switch {
			case v.Effect != verbs.Reads:
				guarded[v.Name] = true
			case len(v.Subs) == 0:
				readOnly[v.Name] = nil
			default:
				next := map[string]bool{"help": true}
				for _, s := range v.Subs {
					if s.Effect == verbs.Reads {
						next[s.Name] = true
					}
				}
				readOnly[v.Name] = next
			}
		}
	}
	return guarded, readOnly
}

// isPiagent reports whether a program name (from progName) is one of
// piagent's binaries, or a copy whose name starts the same way.
func isPiagent(name string) bool { return strings.HasPrefix(name, "piagent") }

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

// gateSelf applies rule gate-self, and opaque-shell for code this
// analysis cannot see.
func (cl *classifier) gateSelf(c *Command) {
	if c.Opaque != "" {
		if containsFold(c.Opaque, "piagent") || cl.hidesGate(c.Opaque) {
			cl.block(c, "gate-self", "runs hidden shell code that could run piagent; approvals are a person's act, run piagent-mcp in a terminal or use /piagent-mcp")
		} else {
			cl.confirm(c, "opaque-shell", "runs shell code that is only known at run time")
		}
	}
	if len(c.Argv) == 0 {
		return
	}
	prog := c.Argv[0]
	name := progName(prog.Lit)
	if isPiagent(name) || cl.aliases[name] || prog.Dynamic && containsFold(prog.Lit, "piagent") {
		if why := piagentArgs(c.Argv[1:], !strings.HasSuffix(name, "-mcp")); why != "" {
			cl.block(c, "gate-self", why+"; approvals and configuration are a person's act: run it in a terminal or use /piagent-mcp")
		}
		return
	}
	if name == "pi" && !prog.Dynamic {
		if why := piArgs(c.Argv[1:]); why != "" {
			cl.block(c, "gate-self", why)
			return
		}
	}
	if prog.Dynamic {
		if why := dynamicProgramArgs(c.Argv[1:]); why != "" {
			cl.block(c, "gate-self", "the program name is computed at run time and "+why+"; it could be piagent-mcp")
			return
		}
		if cl.mentionsPiagent {
			cl.block(c, "gate-self", "the program name is computed at run time in a line that names piagent; it could be piagent-mcp")
			return
		}
		cl.confirm(c, "opaque-shell", "the program name is computed at run time")
		return
	}
	for _, code := range codeArgs(c) {
		if containsFold(code.Lit, "piagent") {
			cl.block(c, "gate-self", name+" code names piagent; approvals are a person's act, run piagent-mcp in a terminal or use /piagent-mcp")
			return
		}
	}
}

// hidesGate reads the rendering of opaque code as shell, best effort, and
// reports whether it trips gate-self (`eval "$(decode) approve x"`).
func (cl *classifier) hidesGate(text string) bool {
	if cl.depth >= 4 {
		return false
	}
	a, err := Parse(text)
	if err != nil {
		return false
	}
	sub := classifier{ctx: cl.ctx, depth: cl.depth + 1, lineFacts: a.lineFacts()}
	sub.aliases = cl.aliases
	for i := range a.Commands {
		if a.Commands[i].Opaque == text {
			continue
		}
		sub.gateSelf(&a.Commands[i])
	}
	for _, f := range sub.out {
		if f.Rule == "gate-self" {
			return true
		}
	}
	return false
}

// piagentArgs says why a piagent command line changes decisions or
// configuration, or "" when it only reads.
func piagentArgs(args []Word, top bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Dynamic {
			return "a piagent argument is computed at run time"
		}
		s := a.Lit
		if strings.HasPrefix(s, "--preset") {
			return "piagent --preset changes the MCP configuration"
		}
		if strings.HasPrefix(s, "-") {
			continue
		}
		sub := strings.ToLower(s)
		if guardedSubcommands[sub] {
			return "piagent " + sub + " records or changes a decision or the configuration"
		}
		if top && sub == "mcp" {
			return piagentArgs(args[i+1:], false)
		}
		next, ok := readOnlySubcommands[sub]
		if !ok {
			return "piagent " + display(sub) + " is not a known read-only subcommand"
		}
		if next == nil {
			for _, b := range args[i+1:] {
				if !b.Dynamic && strings.HasPrefix(b.Lit, "--preset") {
					return "piagent --preset changes the MCP configuration"
				}
			}
			return ""
		}
		for _, b := range args[i+1:] {
			if b.Dynamic {
				return "a piagent argument is computed at run time"
			}
			if strings.HasPrefix(b.Lit, "-") {
				continue
			}
			if next[strings.ToLower(b.Lit)] {
				return ""
			}
			return "piagent " + sub + " " + display(b.Lit) + " is not a known read-only subcommand"
		}
		return ""
	}
	return ""
}

// dynamicProgramArgs: a program computed at run time, followed by what
// would be a guarded piagent subcommand (or by another unknown word), is
// treated as piagent.
func dynamicProgramArgs(args []Word) string {
	for _, a := range args {
		if a.Dynamic {
			return "its first argument is computed at run time too"
		}
		s := a.Lit
		if strings.HasPrefix(s, "--preset") {
			return "it is given --preset"
		}
		if strings.HasPrefix(s, "-") {
			continue
		}
		sub := strings.ToLower(s)
		if guardedSubcommands[sub] || sub == "mcp" {
			return "its subcommand is " + sub
		}
		return ""
	}
	return ""
}

// render is a short form of a command for a finding: wrappers and
// arguments, with values that look secret (after -H/-u/-d/--token …,
// KEY=value on credential-like names, URL user info and queries, known
// token shapes, long random strings) replaced by ***, cut at 160 bytes.
func render(c *Command) string {
	var b strings.Builder
	for _, w := range c.Wrappers {
		b.WriteString(w)
		b.WriteByte(' ')
	}
	maskNext := false
	for i, a := range c.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := a.Lit
		switch {
		case maskNext:
			s = "***"
		default:
			s = maskArg(s)
		}
		maskNext = sensitiveOption(a.Lit)
		b.WriteString(shquote.Show(s))
		if b.Len() > 160 {
			break
		}
	}
	for _, r := range c.Redirects {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r.FD + r.Op + shquote.Show(maskArg(r.Target.Lit)))
	}
	out := b.String()
	if len(out) > 160 {
		cut := 160
		for cut > 0 && out[cut]&0xC0 == 0x80 {
			cut--
		}
		out = out[:cut] + "…"
	}
	if c.Name == "" && len(c.Argv) == 0 && out == "" {
		return "(redirection)"
	}
	return out
}

var sensitiveOptions = map[string]bool{
	"-H": true, "--header": true, "-u": true, "--user": true, "--password": true, "--pass": true,
	"--token": true, "--oauth2-bearer": true, "-d": true, "--data": true, "--data-raw": true,
	"--data-binary": true, "--data-urlencode": true, "--json": true, "-F": true, "--form": true,
	"-b": true, "--cookie": true, "-e": true, "--env": true, "--build-arg": true, "--secret": true,
	"--api-key": true, "--apikey": true, "--auth": true, "-a": true, "--proxy-user": true,
	"--post-data": true, "--body-data": true, "--http-password": true, "--set": true, "--set-string": true,
	"--password-stdin": false, "-p": true, "--key": false,
}

func sensitiveOption(s string) bool { return sensitiveOptions[s] }

var tokenPrefixes = []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxr-", "sk-", "sk_live_", "rk_live_", "pk_live_", "akia", "asia", "npm_", "aiza", "eyj", "ya29.", "hf_", "shpat_", "dop_v1_"}

var credentialWords = []string{"token", "secret", "passw", "pwd", "auth", "cred", "apikey", "api_key", "api-key", "private", "session", "cookie", "bearer", "access_key", "signature"}

func maskArg(s string) string {
	lower := strings.ToLower(s)
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(lower, p) && len(s) >= len(p)+8 {
			return "***"
		}
	}
	if i := strings.Index(lower, "bearer "); i >= 0 {
		return s[:i+len("bearer ")] + "***"
	}
	if i := strings.Index(lower, "basic "); i >= 0 {
		return s[:i+len("basic ")] + "***"
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		host := rest
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			s = s[:i+3] + "***@" + rest[at+1:]
		}
		if q := strings.IndexByte(s, '?'); q >= 0 {
			s = s[:q] + "?***"
		}
		return s
	}
	if name, _, ok := strings.Cut(s, "="); ok && name != "" {
		ln := strings.ToLower(name)
		for _, w := range credentialWords {
			if strings.Contains(ln, w) || strings.HasSuffix(ln, "key") {
				return name + "=***"
			}
		}
	}
	if name, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(name, "/") {
		ln := strings.ToLower(name)
		for _, w := range credentialWords {
			if strings.Contains(ln, w) {
				return name + ": ***"
			}
		}
	}
	if looksRandom(s) {
		return "***"
	}
	return s
}

// looksRandom: a long word of mixed letters and digits without path or
// word structure.
func looksRandom(s string) bool {
	if len(s) < 24 || strings.ContainsAny(s, "/ .") {
		return false
	}
	var upper, lowerN, digit, other int
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lowerN++
		case c >= '0' && c <= '9':
			digit++
		case c == '-' || c == '_' || c == '+' || c == '=':
		default:
			other++
		}
	}
	if other > 0 {
		return false
	}
	classes := 0
	for _, n := range []int{upper, lowerN, digit} {
		if n > 0 {
			classes++
		}
	}
	return classes >= 2 && digit > 0
}

// piCommands are Pi's own subcommands (its first argument) that start MCP
// servers outside any session or change what Pi loads: `pi mcp list` and
// `pi mcp login` connect every enabled server with the built-in client and
// never load piagent's extension; install, remove, update and config change
// the packages and extensions Pi loads (piagent's among them).
var piCommands = map[string]string{
	"mcp":       "Pi's `pi mcp` commands connect MCP servers directly, without piagent's extension, or change their configuration",
	"install":   "`pi install` adds a package whose code Pi loads",
	"remove":    "`pi remove` takes a package out of Pi, piagent's own extension included",
	"uninstall": "`pi uninstall` takes a package out of Pi, piagent's own extension included",
	"update":    "`pi update` replaces the packages Pi loads",
	"config":    "`pi config` switches Pi's extensions and built-ins on and off",
}

// piArgs says why a `pi …` command line may not run from a tool call, or ""
// when it starts an ordinary session (which loads piagent's extension).
func piArgs(args []Word) string {
	if len(args) == 0 {
		return ""
	}
	if args[0].Dynamic {
		return "Pi's subcommand is computed at run time; it could be `pi mcp` or `pi install`"
	}
	if why, ok := piCommands[args[0].Lit]; ok {
		return why + "; run it yourself in a terminal"
	}
	for _, a := range args {
		switch {
		case a.Dynamic && strings.Contains(a.Lit, "builtin"):
			return "a nested Pi's argument is computed at run time and could load Pi's built-in MCP client"
		case a.Lit == "--no-extensions" || a.Lit == "-ne":
			return "a nested Pi without extensions runs without piagent's guard"
		case strings.Contains(a.Lit, "builtin:mcp"):
			return "a nested Pi with `builtin:mcp` loads Pi's built-in MCP client, which starts servers without asking piagent"
		}
	}
	return ""
}
