package policy

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/piagent/piagent/internal/paths"
)

// MaxInspectionDepth is how deeply nested a tool input may be; an input
// nested deeper is blocked, since the parts beyond cannot be inspected.
const MaxInspectionDepth = 32

// contentField reports the keys whose string values are content, not paths.
// The list is written down in the package comment; keep the two in step.
func contentField(key string) bool {
	switch key {
	case "content", "contents", "text", "query", "pattern",
		"command", "old_string", "new_string", "oldText", "newText",
		"old_str", "new_str", "description", "prompt", "message",
		"title", "body", "summary", "note", "comment", "reason":
		return true
	}
	return false
}

// candidate is a string found in a tool input.
type candidate struct {
	field string // where it was found, as a dotted path ("edits[0].path")
	value string
	kind  candKind
}

// What a candidate is: a value the policy reads as a path, an object's key
// (read as a path too), or content, which only the gate's self-protection
// reads (for tools other than Pi's: any string could name a file it writes).
type candKind uint8

const (
	candPath candKind = iota
	candKey
	candContent
)

// extraction is what extract found.
type extraction struct {
	cands    []candidate
	tooDeep  string // the field beyond MaxInspectionDepth, "" when none
	search   []candidate
	commands []candidate // shell command strings carried by non-bash tools
	content  bool        // keep content candidates (for the self-protection)
	hint     int         // how many candidates to make room for at the first
}

// add keeps a candidate; the first makes room for about as many as the
// input has keys, in one allocation.
func (x *extraction) add(c candidate) {
	if x.cands == nil {
		x.cands = make([]candidate, 0, x.hint)
	}
	x.cands = append(x.cands, c)
}

// extract walks a tool input. Strings in fields not known to hold content are
// path candidates; grep.glob and find.pattern are search channels; a string
// that holds a JSON object or array is decoded and walked as well.
func extract(call Call) extraction {
	tool := call.ToolName
	x := extraction{content: !piTool(tool), hint: len(call.Input) + 2}
	var buf [8]keyValue // most inputs have a few keys: no allocation for them
	for _, kv := range appendSorted(buf[:0], call.Input) {
		k, v := kv.k, kv.v
		switch {
		case tool == "bash" && k == "command":
			continue // shell analysis
		case tool == "grep" && k == "glob", tool == "find" && k == "pattern":
			if s, ok := v.(string); ok {
				x.search = append(x.search, candidate{field: k, value: s})
				continue
			}
		case tool == "mcp" && k == "search":
			if s, ok := v.(string); ok {
				x.addContent(k, s) // the proxy's tool search query
			}
			continue
		case tool != "bash" && k == "command":
			if s, ok := v.(string); ok {
				x.commands = append(x.commands, candidate{field: k, value: s})
				continue
			}
		case tool == "mcp" && k == "args":
			x.walkMCPArgs(v)
		}
		x.walk(k, k, v, 1)
	}
	return x
}

// walkMCPArgs picks a shell command the proxy passes to a tool.
func (x *extraction) walkMCPArgs(v any) {
	if s, ok := v.(string); ok {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil {
			v = m
		}
	}
	if m, ok := v.(map[string]any); ok {
		if c, ok := m["command"].(string); ok {
			x.commands = append(x.commands, candidate{field: "args.command", value: c})
		}
	}
}

// walk visits v, found under key at field, nested depth containers deep
// (the input object is depth 1).
func (x *extraction) walk(key, field string, v any, depth int) {
	if x.tooDeep != "" {
		return
	}
	switch t := v.(type) {
	case string:
		if contentField(key) {
			x.addContent(field, t)
			return
		}
		x.add(candidate{field: field, value: t})
		if s := strings.TrimSpace(t); len(s) > 1 && (s[0] == '{' || s[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(s), &inner) == nil {
				x.walk(key, field, inner, depth+1)
			}
		}
	case map[string]any:
		if depth+1 > MaxInspectionDepth {
			x.tooDeep = field
			return
		}
		for _, k := range sortedKeys(t) {
			x.add(candidate{field: field + ".<key>", value: k, kind: candKey})
			x.walk(k, field+"."+k, t[k], depth+1)
		}
	case []any:
		if depth+1 > MaxInspectionDepth {
			x.tooDeep = field
			return
		}
		for i, e := range t {
			x.walk(key, field+"["+itoa(i)+"]", e, depth+1)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// separators split a string into further candidates: a path can hide inside
// "--file=.env", "a.txt,.env" or a sentence.
const separators = " \t\r\n\x00,;|=\"'`()<>{}[]"

// variants returns the forms of a candidate string to check: as written, and
// percent-decoded once (a broken escape stays as written); file:// URIs as
// their path; the paths Pi's file tool would open for them (piForms; tool
// is "" for a shell word, which names the file as written); and the pieces
// between separators. The result has no duplicates and no empty strings.
func variants(s, tool string) []string {
	out := make([]string, 0, 4)
	add := func(v string) {
		if v == "" {
			return
		}
		for _, o := range out {
			if o == v {
				return
			}
		}
		out = append(out, v)
	}
	forms := [2]string{s, percentDecode(s)}
	for _, f := range forms {
		add(f)
		if u, ok := fileURLPath(f); ok {
			add(u)
		}
	}
	if tool != "" {
		for _, f := range out[:len(out):len(out)] {
			for _, pf := range piForms(f, tool == "read") {
				add(pf)
			}
		}
	}
	if strings.ContainsAny(s, separators) {
		n := len(out)
		for _, f := range out[:n] {
			for _, piece := range strings.FieldsFunc(f, func(r rune) bool { return strings.ContainsRune(separators, r) }) {
				add(piece)
				if u, ok := fileURLPath(piece); ok {
					add(u)
				}
			}
		}
	}
	return out
}

// piForms are the paths Pi's file tools open for a path as written, beyond
// the forms resolvePath reads (issue 39, item 6): Unicode spaces read as a
// space (resolveToCwd, paths.ToolPath); and for read, the macOS name
// variants resolveReadPath opens when the name as written does not exist:
// " AM." and " PM." with a narrow no-break space, NFD, the curly
// apostrophe, and NFD with the curly apostrophe (Pi 0.86 and 1.6,
// core/tools/path-utils.js). The policy checks them all: whichever Pi
// opens, a protected path is found.
func piForms(s string, read bool) []string {
	n := paths.PiSpaces(s)
	out := []string{n}
	if read {
		nfd := norm.NFD.String(n)
		out = append(out, amPM.ReplaceAllString(n, "\u202F$1."), nfd, curly(n), curly(nfd))
	}
	return out
}

// amPM is resolveReadPath's / (AM|PM)\./gi.
var amPM = regexp.MustCompile(`(?i) (AM|PM)\.`)

func curly(s string) string { return strings.ReplaceAll(s, "'", "\u2019") }

// percentDecode decodes %XX escapes once. An escape that is not two hex
// digits is kept as written.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// fileURLPath turns a file: URI into its path, percent-decoded once. The host
// part of file://host/path is dropped.
func fileURLPath(s string) (string, bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return "", false
	}
	rest := s[5:]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = "/"
		}
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return percentDecode(rest), true
}

// resolved is a candidate path in the forms that are matched.
type resolved struct {
	raw   string // absolute, as written ("..", "." kept), original case
	clean string // absolute, lexically cleaned, original case
	real  string // the symlink-resolved target, "" when unknown
}

// resolvePath makes a candidate absolute: "\" becomes "/", a leading "@" (Pi
// strips it) goes, "~", "$HOME" and "${HOME}" expand, a relative path is
// joined to the working directory, and Facts.RealPath follows symlinks (for
// a path that does not exist yet, its nearest existing ancestor).
func resolvePath(s string, f *Facts) resolved {
	raw := rawPath(s, f)
	r := resolved{raw: raw, clean: path.Clean(raw)}
	if !strings.HasPrefix(r.clean, "/") {
		r.clean = "/" + r.clean
	}
	if f.RealPath != nil {
		if ph, ok := physical(raw, f.RealPath); ok {
			r.real = realPath(ph, f.RealPath)
		} else {
			r.real = realPath(r.clean, f.RealPath)
		}
	}
	return r
}

// rawPath is s absolute, as written: the home's spellings expanded, a
// relative path joined to the working folder, nothing cleaned or resolved.
func rawPath(s string, f *Facts) string {
	s = strings.ReplaceAll(s, `\`, "/")
	s = strings.TrimPrefix(s, "@")
	switch {
	case s == "~" || s == "$HOME" || s == "${HOME}":
		s = f.Home
	case strings.HasPrefix(s, "~/"):
		s = f.Home + s[1:]
	case strings.HasPrefix(s, "$HOME/"):
		s = f.Home + s[5:]
	case strings.HasPrefix(s, "${HOME}/"):
		s = f.Home + s[7:]
	}
	if !strings.HasPrefix(s, "/") {
		s = strings.TrimSuffix(f.Cwd, "/") + "/" + s
	}
	return s
}

// physical is where the kernel takes a path with "..": it steps up from
// where the links before the ".." lead, not from the words written
// (cfg/../.bashrc, with cfg a link to ~/.config, is ~/.bashrc). ok is
// false when the path has no "..".
func physical(raw string, rp func(string) (string, bool)) (string, bool) {
	if !hasDotDot(raw) {
		return "", false // "./..." (a go package pattern) has none
	}
	dots := false
	cur := "/"
	for _, s := range strings.Split(raw, "/") {
		switch s {
		case "", ".":
		case "..":
			dots = true
			if t, ok := rp(cur); ok && strings.HasPrefix(t, "/") {
				cur = t
			}
			cur = path.Dir(cur)
		default:
			cur = path.Join(cur, s)
		}
	}
	return cur, dots
}

// hasDotDot reports whether p has a ".." segment.
func hasDotDot(p string) bool {
	return p == ".." || strings.HasPrefix(p, "../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/../")
}

// realPath follows symlinks for p, or for its nearest ancestor that exists.
// p is clean and absolute (resolvePath's clean form): each ancestor is a
// prefix of it, cut at a slash, and what lies below the one found is the
// rest of p.
func realPath(p string, rp func(string) (string, bool)) string {
	cur := p
	for range 64 {
		if t, ok := rp(cur); ok {
			if len(cur) == len(p) {
				return t
			}
			if t == cur && strings.HasPrefix(p, cur) && (cur == "/" || p[len(cur)] == '/' && !strings.HasSuffix(cur, "/")) {
				return p // no link on the way: what the join below gives, uncopied
			}
			rest := p[len(cur):]
			if cur == "/" {
				rest = p[1:]
			} else {
				rest = rest[1:]
			}
			return strings.TrimSuffix(t, "/") + "/" + rest
		}
		if cur == "/" || cur == "" || cur == "." {
			return ""
		}
		i := strings.LastIndexByte(cur, '/')
		switch {
		case i < 0:
			cur = "."
		case i == 0:
			cur = "/"
		default:
			cur = cur[:i]
		}
	}
	return ""
}

// cleanAbs cleans an absolute path; a relative one is joined to base.
func cleanAbs(p, base string) string {
	if p == "" {
		return ""
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if !strings.HasPrefix(p, "/") {
		p = strings.TrimSuffix(base, "/") + "/" + p
	}
	return path.Clean(p)
}

type keyValue struct {
	k string
	v any
}

// appendSorted appends m's entries to dst, sorted by key.
func appendSorted(dst []keyValue, m map[string]any) []keyValue {
	for k, v := range m {
		dst = append(dst, keyValue{k, v})
	}
	slices.SortFunc(dst, func(a, b keyValue) int { return strings.Compare(a.k, b.k) })
	return dst
}

// addContent keeps a content value, for the self-protection only.
func (x *extraction) addContent(field, s string) {
	if x.content {
		x.add(candidate{field: field, value: s, kind: candContent})
	}
}
