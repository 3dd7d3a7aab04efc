// Package paths resolves the places Pi and pi-mcp-adapter keep their files:
// the agent dir, the project config dir name and `~` expansion. Every input
// arrives as a value; nothing here reads the process environment.
package paths

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/safefile"
)

// ErrNoHome is returned when no home directory is known.
var ErrNoHome = errors.New("no home directory: set HOME")

// Getenv looks a variable up; a nil Getenv has no variables.
type Getenv func(string) string

func (g Getenv) get(k string) string {
	if g == nil {
		return ""
	}
	return g(k)
}

// piConfig is the piConfig block of the manifest PI_PACKAGE_DIR names, which
// distributions built on Pi use to rebrand it.
type piConfig struct {
	Name      any `json:"name"`
	ConfigDir any `json:"configDir"`
}

func readPiConfig(getenv Getenv) piConfig {
	dir := strings.TrimSpace(getenv.get("PI_PACKAGE_DIR"))
	if dir == "" {
		return piConfig{}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return piConfig{}
	}
	data, err := safefile.Read(filepath.Join(abs, "package.json"), safefile.Options{})
	if err != nil {
		return piConfig{}
	}
	var m struct {
		PiConfig piConfig `json:"piConfig"`
	}
	if json.Unmarshal(data, &m) != nil {
		return piConfig{}
	}
	return m.PiConfig
}

func trimmedString(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// ConfigDirName is the project config folder, ".pi" unless the Pi manifest
// under PI_PACKAGE_DIR renames it.
func ConfigDirName(getenv Getenv) string {
	if d := trimmedString(readPiConfig(getenv).ConfigDir); d != "" {
		return d
	}
	return ".pi"
}

// AppName is what the host calls itself: "pi" unless rebranded.
func AppName(getenv Getenv) string {
	if n := trimmedString(readPiConfig(getenv).Name); n != "" {
		return n
	}
	return "pi"
}

// AgentDirVar is the variable that overrides the agent dir:
// PI_CODING_AGENT_DIR, or <NAME>_CODING_AGENT_DIR for a rebranded host.
func AgentDirVar(getenv Getenv) string {
	return strings.ToUpper(AppName(getenv)) + "_CODING_AGENT_DIR"
}

// AgentDir resolves Pi's agent dir the way pi-mcp-adapter does: the override
// variable with `~` expanded, or <home>/<configDir>/agent. cwd resolves a
// relative override.
func AgentDir(home, cwd string, getenv Getenv) string {
	configured := strings.TrimSpace(getenv.get(AgentDirVar(getenv)))
	switch {
	case configured == "":
		return filepath.Join(home, ConfigDirName(getenv), "agent")
	case configured == "~":
		return home
	case strings.HasPrefix(configured, "~/"):
		return filepath.Join(home, configured[2:])
	}
	return Abs(cwd, configured)
}

// Abs resolves p against cwd when it is relative, and cleans it.
func Abs(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// AbsFrom is Abs for a dir that is already clean and absolute: a relative
// p of plain names (no empty, . or .. element) is joined without cleaning
// again, which the gate does for every argument of every repository
// server (TestAbsFrom holds it to Abs).
func AbsFrom(dir, p string) string {
	if len(dir) > 1 && plainRel(p) {
		return dir + string(filepath.Separator) + p
	}
	return Abs(dir, p)
}

// plainRel reports whether p is relative and made of plain names: joined
// to a clean folder, it stays clean.
func plainRel(p string) bool {
	if p == "" || p[0] == filepath.Separator {
		return false
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != filepath.Separator {
			continue
		}
		if e := p[start:i]; e == "" || e == "." || e == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// Expand turns `~` and `~/x` into paths under home; other values are returned
// unchanged.
func Expand(home, p string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Within reports whether p is root or lies under it. Both must be clean,
// and both absolute or both relative to one folder (baseline's
// project-relative paths); it compares strings only (it runs on the
// guard's hot path). An empty root holds nothing.
func Within(root, p string) bool {
	switch {
	case root == "":
		return false
	case p == root:
		return true
	case root == string(filepath.Separator):
		return strings.HasPrefix(p, root)
	}
	return len(p) > len(root) && p[len(root)] == filepath.Separator && p[:len(root)] == root
}

// WithinFold is Within with both paths lowercased: the test for a file
// system that folds case (macOS's, by default), where a rule must hold for
// every spelling of a folder.
func WithinFold(root, p string) bool {
	return Within(strings.ToLower(root), strings.ToLower(p))
}

// PiSpaces is p with the characters Pi's file tools read as a plain space
// replaced by one (resolveToCwd's first step).
func PiSpaces(p string) string { return unicodeSpaces.Replace(p) }

// unicodeSpaces are the characters Pi's file tools read as a plain space.
var unicodeSpaces = strings.NewReplacer("\u00A0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ",
	"\u202F", " ", "\u205F", " ", "\u3000", " ")

// ToolPath resolves a path argument exactly as Pi's read, write and edit
// tools do (resolveToCwd in Pi 0.86 and 1.6): Unicode spaces become spaces,
// one leading "@" is dropped, "~" and "~/…" expand to home, a file:// URL
// becomes its path, and the result is made absolute against cwd and
// cleaned. ok is false where Pi throws (a file URL with another host, or an
// encoded "/"), and then Pi touches nothing.
func ToolPath(home, cwd, p string) (abs string, ok bool) {
	p = PiSpaces(p)
	p = strings.TrimPrefix(p, "@")
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case strings.HasPrefix(p, "file://"):
		if p, ok = fileURLPath(p); !ok {
			return "", false
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(Expand(home, cwd), p)
	}
	return filepath.Clean(p), true
}

// fileURLPath is Node's fileURLToPath on POSIX for the URLs a tool call
// carries: host empty or localhost (any case), tabs and newlines dropped,
// "\" read as "/", percent-decoding, and an error for an encoded "/", a
// broken escape or escapes that are not UTF-8.
func fileURLPath(u string) (string, bool) {
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	rest := strings.ReplaceAll(u[len("file://"):], `\`, "/")
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	host, path := rest, "/"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	if host != "" && !strings.EqualFold(host, "localhost") {
		return "", false
	}
	low := strings.ToLower(path)
	if strings.Contains(low, "%2f") {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '%' {
			// decodeURIComponent: a broken escape throws
			if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
				return "", false
			}
			b.WriteByte(unhex(path[i+1])<<4 | unhex(path[i+2]))
			i += 2
			continue
		}
		b.WriteByte(path[i])
	}
	if !utf8.ValidString(b.String()) {
		return "", false // decodeURIComponent throws on bytes that are not UTF-8
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// LookPath finds name on the search path pathVar as execvp does — what a
// shell, or Node's spawn for the adapter, would run: a name with a slash is
// not searched, an empty entry is the current directory and a relative
// entry is taken from dir. The first regular file with an execute bit
// wins; "" when there is none. stat is os.Stat or a cached stand-in.
func LookPath(name, pathVar, dir string, stat func(string) (fs.FileInfo, error)) string {
	return lookPath(name, pathVar, dir, stat)
}

// LookPathAbs is LookPath through the absolute entries alone: what piagent
// itself runs. An empty or relative entry would let the folder a command
// starts in — a repository — choose the program.
func LookPathAbs(name, pathVar string, stat func(string) (fs.FileInfo, error)) string {
	return lookPath(name, pathVar, "", stat)
}

// lookPath is the one search; dir "" passes over empty and relative entries.
func lookPath(name, pathVar, dir string, stat func(string) (fs.FileInfo, error)) string {
	if name == "" || strings.ContainsRune(name, filepath.Separator) {
		return ""
	}
	for _, d := range filepath.SplitList(pathVar) {
		if dir == "" && !filepath.IsAbs(d) {
			continue
		}
		p := Abs(dir, filepath.Join(cmp.Or(d, "."), name))
		if Executable(p, stat) {
			return p
		}
	}
	return ""
}

// Executable reports whether p is a regular file with an execute bit, as
// stat sees it: what a search of PATH takes for a program.
func Executable(p string, stat func(string) (fs.FileInfo, error)) bool {
	fi, err := stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
