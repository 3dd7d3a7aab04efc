package sandbox

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/registry"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenProfile is the agent profile for a fixed home, project and registry
// that exist nowhere on this machine (so nothing depends on the machine),
// with a few secrets set by hand.
func goldenProfile() Profile {
	home, proj := "/Users/ana", "/Users/ana/src/app"
	agent := filepath.Join(home, ".pi", "agent")
	reg := registry.List(registry.Input{Home: home, AgentDir: agent, Project: proj, ConfigDir: ".pi", TempDir: "/tmp", Binaries: []string{"/usr/local/bin/piagent"}})
	p := Agent(Input{Home: home, AgentDir: agent, Project: proj, ConfigDir: ".pi", TempDir: "/private/tmp", Registry: reg, User: "501",
		Getenv: func(k string) string { return map[string]string{"GOPATH": "/Users/ana/go"}[k] }}, nil)
	p.Hidden = []string{proj + "/.env", proj + "/certs/server.key", agent + "/auth.json"}
	p.HiddenDirs = []string{agent + "/mcp-oauth"}
	return p
}

func TestSeatbeltGolden(t *testing.T) {
	t.Parallel()
	got := Seatbelt(goldenProfile())
	golden := filepath.Join("testdata", "agent.sb")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("profile differs from %s (go test -run TestSeatbeltGolden -update to accept):\n%s", golden, got)
	}
}

// Every registry entry appears in a deny file-write* rule, the project's
// own included: Seatbelt can deny inside an allowed folder.
func TestSeatbeltDeniesEveryEntry(t *testing.T) {
	t.Parallel()
	p := goldenProfile()
	forms, err := parseSBPL(Seatbelt(p))
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]string{} // path → filter
	readDenied := map[string]bool{}
	for _, f := range forms {
		if len(f.list) < 2 || f.list[0].atom != "deny" {
			continue
		}
		for _, filt := range f.list[2:] {
			if len(filt.list) == 2 && filt.list[1].isStr {
				switch f.list[1].atom {
				case "file-write*":
					denied[filt.list[1].str] = filt.list[0].atom
				case "file-read*":
					readDenied[filt.list[1].str] = true
				}
			}
		}
	}
	for _, e := range p.Protected {
		want := "literal"
		if e.Dir {
			want = "subpath"
		}
		if denied[e.Path] != want {
			t.Errorf("%s: no (deny file-write* (%s …)) (got %q)", e.Path, want, denied[e.Path])
		}
	}
	if len(p.Protected) < 30 {
		t.Errorf("only %d registry entries", len(p.Protected))
	}
	for _, s := range append(append([]string{}, p.Hidden...), p.HiddenDirs...) {
		if !readDenied[s] {
			t.Errorf("secret %s is readable", s)
		}
	}
	for _, in := range []string{"/Users/ana/src/app/.pi", "/Users/ana/src/app/.git/hooks", "/Users/ana/src/app/.mcp.json", "/Users/ana/.pi/piagent-mcp-approvals.json"} {
		if denied[in] == "" {
			t.Errorf("%s is writable", in)
		}
	}
}

// The generated profile is well-formed SBPL as far as a parser can tell:
// balanced forms, known operations and filters, and strings that read back
// exactly, whatever the path holds.
func TestSeatbeltWellFormed(t *testing.T) {
	t.Parallel()
	odd := []string{`/Users/a "quoted"/p`, `/Users/back\slash/p`, "/Users/new\nline/p", "/Users/sp ace/(paren)/;semi"}
	p := Profile{Name: "agent", Writable: odd, Protected: []Path{{Path: odd[0] + "/.pi", Dir: true}, {Path: odd[1] + "/.mcp.json"}},
		Hidden: []string{odd[2] + "/.env"}, NoUnixSockets: true, NetworkOff: true}
	if sb := Seatbelt(p); !strings.Contains(sb, "(deny network-outbound (remote ip))") {
		t.Errorf("the network off is not in the profile:\n%s", sb)
	}
	forms, err := parseSBPL(Seatbelt(p))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{"default": true, "file-write*": true, "file-read*": true, "network-outbound": true}
	filters := map[string]bool{"literal": true, "subpath": true, "regex": true, "remote": true}
	strs := map[string]bool{}
	if len(forms) == 0 || forms[0].list[0].atom != "version" {
		t.Fatal("no (version 1) first")
	}
	for _, f := range forms[1:] {
		if len(f.list) < 2 || (f.list[0].atom != "allow" && f.list[0].atom != "deny") || !ops[f.list[1].atom] {
			t.Errorf("unknown form %v", f)
			continue
		}
		for _, filt := range f.list[2:] {
			if len(filt.list) == 0 || !filters[filt.list[0].atom] {
				t.Errorf("unknown filter %v", filt)
				continue
			}
			if len(filt.list) > 1 && filt.list[1].isStr {
				strs[filt.list[1].str] = true
			}
		}
	}
	for _, want := range []string{odd[0], odd[1], odd[2] + "/.env", odd[3], odd[0] + "/.pi"} {
		if !strs[want] {
			t.Errorf("%q does not read back from the profile", want)
		}
	}
}

// sexp is a parsed SBPL form: an atom, a string or a list.
type sexp struct {
	atom  string
	str   string
	isStr bool
	list  []sexp
}

// parseSBPL reads SBPL as s-expressions: comments, atoms, "strings" with
// \\ \" \xNN escapes, #"regex" literals; it fails on unbalanced forms or
// unknown escapes.
func parseSBPL(src string) ([]sexp, error) {
	var stack [][]sexp
	var top []sexp
	push := func(x sexp) {
		if len(stack) == 0 {
			top = append(top, x)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], x)
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, nil)
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(sexp{list: l})
			i++
		case c == '"' || (c == '#' && i+1 < len(src) && src[i+1] == '"'):
			if c == '#' {
				i++
			}
			i++
			var b strings.Builder
			for ; ; i++ {
				if i >= len(src) {
					return nil, fmt.Errorf("unterminated string")
				}
				if src[i] == '"' {
					i++
					break
				}
				if src[i] == '\n' {
					return nil, fmt.Errorf("raw newline in a string")
				}
				if src[i] == '\\' {
					if i+1 >= len(src) {
						return nil, fmt.Errorf("dangling escape")
					}
					switch src[i+1] {
					case '\\', '"':
						b.WriteByte(src[i+1])
						i++
					case 'x':
						var v byte
						for _, h := range src[i+2 : i+4] {
							v = v*16 + byte(strings.IndexRune("0123456789abcdef", h))
						}
						b.WriteByte(v)
						i += 3
					default:
						if c == '#' {
							b.WriteByte('\\')
							continue
						}
						return nil, fmt.Errorf("unknown escape \\%c", src[i+1])
					}
					continue
				}
				b.WriteByte(src[i])
			}
			push(sexp{str: b.String(), isStr: true})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()\";", rune(src[j])) {
				j++
			}
			push(sexp{atom: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed form(s)", len(stack))
	}
	return top, nil
}
