package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word converts a syntax word and walks the substitutions inside it.
func (w *walker) word(sw *syntax.Word, sc scope) Word {
	return convertWord(sw, sc, w)
}

// wordOnly converts a syntax word without walking its substitutions.
func wordOnly(sw *syntax.Word, sc scope) Word {
	return convertWord(sw, sc, nil)
}

type wordBuilder struct {
	lit, pat []byte
	dyn, exp bool
}

func (b *wordBuilder) literal(s string) {
	b.lit = append(b.lit, s...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '*' || c == '?' || c == '[' || c == '\\' {
			b.pat = append(b.pat, '\\')
		}
		b.pat = append(b.pat, s[i])
	}
}

func (b *wordBuilder) literalByte(c byte) {
	b.lit = append(b.lit, c)
	if c == '*' || c == '?' || c == '[' || c == '\\' {
		b.pat = append(b.pat, '\\')
	}
	b.pat = append(b.pat, c)
}

func (b *wordBuilder) glob(raw, pat string) {
	b.dyn = true
	b.lit = append(b.lit, raw...)
	b.pat = append(b.pat, pat...)
}

func (b *wordBuilder) expansion(raw string) {
	b.dyn, b.exp = true, true
	b.lit = append(b.lit, raw...)
	if n := len(b.pat); n < 2 || b.pat[n-1] != '*' || b.pat[n-2] != '*' {
		b.pat = append(b.pat, "**"...)
	}
}

func convertWord(sw *syntax.Word, sc scope, w *walker) Word {
	if sw == nil {
		return Word{}
	}
	if t, ok := otherTilde(sw); ok {
		return t
	}
	// Fast paths: a plain literal or a single-quoted string.
	if len(sw.Parts) == 1 {
		switch p := sw.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsAny(p.Value, "\\*?[{") {
				return Word{Lit: p.Value}
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return Word{Lit: p.Value}
			}
		}
	}
	var b wordBuilder
	for _, part := range sw.Parts {
		convertPart(&b, part, false, sc, w)
	}
	out := Word{Lit: string(b.lit), Dynamic: b.dyn, Expands: b.exp}
	if b.dyn {
		out.Pattern = string(b.pat)
	}
	if len(sw.Parts) == 1 {
		switch p := sw.Parts[0].(type) {
		case *syntax.ProcSubst:
			out.Pattern = "/dev/fd/*" // the shell passes a pipe's name
		case *syntax.CmdSubst:
			if pat, ok := freshTemp(p); ok {
				out.Pattern = pat // a name mktemp just made
			} else if under, name, ok := listedFiles(p, sc); ok {
				out.Under, out.Name = under, name // the files a listing prints
			}
		}
	}
	return out
}

// listedFiles reports the folder and name filter of the files a command
// substitution lists: `git ls-files [PATTERN]` (the files below the
// working folder; tracked ones are a subset) or a find whose {} is known.
func listedFiles(cs *syntax.CmdSubst, sc scope) (under, name string, ok bool) {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return "", "", false
	}
	call, isCall := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return "", "", false
	}
	args := make([]Word, len(call.Args))
	for i, a := range call.Args {
		if args[i] = wordOnly(a, sc); args[i].Expands {
			return "", "", false
		}
	}
	switch args[0].Lit {
	case "git":
		if len(args) < 2 || args[1].Lit != "ls-files" || len(args) > 3 {
			return "", "", false
		}
		if len(args) == 3 {
			n := args[2].Lit
			if strings.HasPrefix(n, "-") || strings.Contains(n, "/") {
				return "", "", false
			}
			return ".", n, true
		}
		return ".", "", true
	case "find":
		roots, _ := findParts(args[1:])
		if u, n := findUnder(roots, args[1:], "{}"); u != "" {
			return u, n, true
		}
	}
	return "", "", false
}

// freshTempPattern reports whether a word's Pattern is one freshTemp gave:
// a name in /tmp that only mktemp's random letters complete.
func freshTempPattern(p string) bool {
	rest, ok := strings.CutPrefix(p, "/tmp/")
	return ok && !strings.ContainsAny(strings.ReplaceAll(rest, "[a-zA-Z0-9]", ""), "*?[/")
}

// freshTemp reports whether a command substitution is only mktemp making
// a name in the temporary folder (no -p, --tmpdir or template with a /),
// with the pattern of the names it makes.
func freshTemp(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return "", false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || call.Args[0].Lit() != "mktemp" {
		return "", false
	}
	template := "tmp.XXXXXXXXXX"
	for _, a := range call.Args[1:] {
		l := a.Lit()
		switch {
		case l == "":
			return "", false
		case l == "-d" || l == "-q" || l == "-u" || l == "-t" || l == "--directory" || l == "--quiet" || l == "--dry-run":
		case strings.HasPrefix(l, "-") || strings.Contains(l, "/") || !strings.HasSuffix(l, "XXX"):
			return "", false
		default:
			template = l
		}
	}
	var b wordBuilder
	stem := strings.TrimRight(template, "X")
	b.literal(stem)
	// each X becomes a letter or a digit
	return "/tmp/" + string(b.pat) + strings.Repeat("[a-zA-Z0-9]", len(template)-len(stem)), true
}

// value is what a parameter expansion holds when the line says so before
// it is used: $TMPDIR (and ${TMPDIR:-/tmp}) is the temporary folder, and
// a variable assigned a literal or a glob earlier in the line (a for
// loop's one item, x=value) holds it, while nothing before could create,
// move or link files. A glob value is then matched against the files as
// they are, which is what the shell will do.
func (w *walker) value(p *syntax.ParamExp) (Word, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 {
		return Word{}, false
	}
	name := p.Param.Value
	switch name {
	case "PWD":
		if p.Exp == nil {
			return Word{Lit: "."}, true // the folder the command runs in
		}
		return Word{}, false
	case "TMPDIR", "TMP", "TEMP":
		if p.Exp == nil {
			return Word{Lit: "/tmp"}, true
		}
		if (p.Exp.Op == syntax.DefaultUnsetOrNull || p.Exp.Op == syntax.DefaultUnset) && p.Exp.Word != nil {
			if d := p.Exp.Word.Lit(); d == "/tmp" || d == "/var/tmp" {
				return Word{Lit: d}, true
			}
		}
		return Word{}, false
	}
	if w == nil || p.Exp != nil || w.vars == nil {
		return Word{}, false
	}
	v, ok := w.vars[name]
	return v, ok
}

func convertPart(b *wordBuilder, part syntax.WordPart, quoted bool, sc scope, w *walker) {
	switch p := part.(type) {
	case *syntax.Lit:
		if quoted {
			unescapeDouble(b, p.Value)
		} else {
			unquotedLit(b, p.Value)
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			b.literal(decodeANSIC(p.Value))
		} else {
			b.literal(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			convertPart(b, q, true, sc, w)
		}
	case *syntax.CmdSubst:
		b.expansion(sc.text(p))
		if w != nil {
			w.stmts(p.Stmts, sc.with("cmdsubst"))
		}
	case *syntax.ProcSubst:
		b.expansion(sc.text(p))
		if w != nil {
			w.stmts(p.Stmts, sc.with("procsubst"))
		}
	case *syntax.ParamExp:
		if v, ok := w.value(p); ok {
			if v.Dynamic {
				b.glob(v.Lit, v.Pattern)
			} else {
				b.literal(v.Lit)
			}
			return
		}
		expansion(b, p, sc, w)
	case *syntax.ArithmExp:
		expansion(b, p, sc, w)
	case *syntax.ExtGlob:
		if quoted {
			b.literal(sc.text(p))
		} else {
			b.glob(sc.text(p), "*")
		}
	default:
		b.expansion(sc.text(part))
		if w != nil {
			w.nested(part, sc)
		}
	}
}

// expansion adds a parameter or arithmetic expansion as written, and walks
// the substitutions inside it.
func expansion(b *wordBuilder, p syntax.Node, sc scope, w *walker) {
	raw := sc.text(p)
	if raw == "" {
		raw = "$?"
	}
	b.expansion(raw)
	if w != nil {
		w.nested(p, sc)
	}
}

// unquotedLit handles backslash escapes, globs and brace expansion in an
// unquoted literal.
func unquotedLit(b *wordBuilder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.literalByte(s[i])
				}
			}
		case '[':
			// a bracket with no closing one after it matches itself
			if strings.IndexByte(s[i+1:], ']') < 0 {
				b.literalByte(c)
			} else {
				b.glob("[", "[")
			}
		case '*', '?':
			b.glob(string(c), string(c))
		case '{':
			if end, ok := braceEnd(s, i); ok {
				b.glob(s[i:end+1], "*")
				i = end
			} else {
				b.literalByte(c)
			}
		default:
			b.literalByte(c)
		}
	}
}

// braceEnd reports where a brace expansion starting at s[i] ends, when the
// braces hold a comma or "..".
func braceEnd(s string, i int) (int, bool) {
	depth := 0
	expands := false
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, expands
			}
		case ',':
			expands = true
		case '.':
			if j+1 < len(s) && s[j+1] == '.' {
				expands = true
			}
		}
	}
	return 0, false
}

func unescapeDouble(b *wordBuilder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.literalByte(s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.literalByte(c)
	}
}

// decodeANSIC decodes the body of a $'…' string.
func decodeANSIC(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 'e', 'E':
			out = append(out, 0x1b)
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				out = append(out, '\\', e)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				out = append(out, byte(v))
			} else {
				out = utf8.AppendRune(out, rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			out = append(out, byte(v))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				out = append(out, s[i]&0x1f)
			}
		default: // \\ \' \" \? and unknown escapes
			if e == '\\' || e == '\'' || e == '"' || e == '?' {
				out = append(out, e)
			} else {
				out = append(out, '\\', e)
			}
		}
	}
	return string(out)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// otherTilde reads a word that starts with a tilde-prefix other than "~":
// ~+ (PWD), ~- (OLDPWD), ~N, ~+N, ~-N (the folder stack) and ~name (a
// user's home, the person's own among them). The shell expands it to a
// folder the words do not show: the word is an expansion, anything before
// its rest.
func otherTilde(sw *syntax.Word) (Word, bool) {
	if len(sw.Parts) == 0 {
		return Word{}, false
	}
	first, ok := sw.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(first.Value, "~") {
		return Word{}, false
	}
	prefix, _, _ := strings.Cut(first.Value, "/")
	if prefix == "~" || len(sw.Parts) > 1 && !strings.Contains(first.Value, "/") {
		return Word{}, false // "~", "~/…"; or a quoted part inside the prefix: no expansion
	}
	lit := first.Value
	for _, p := range sw.Parts[1:] {
		switch q := p.(type) {
		case *syntax.Lit:
			lit += q.Value
		case *syntax.SglQuoted:
			lit += q.Value
		default:
			lit += "$"
		}
	}
	rest := ""
	if i := strings.IndexByte(lit, '/'); i >= 0 {
		rest = lit[i:]
	}
	if prefix == "~+" && len(sw.Parts) == 1 {
		return Word{Lit: "." + rest}, true // PWD: the folder the command runs in
	}
	pat := "**"
	if rest != "" && !strings.Contains(rest, "..") && !strings.ContainsAny(rest, "$*?[\\") {
		pat = "**" + rest
	}
	return Word{Lit: lit, Dynamic: true, Expands: true, Pattern: pat}, true
}
