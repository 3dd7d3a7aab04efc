// Package serverrun is the record of a confined MCP server's last run: how
// it ended (exit.json) and the tail of what it wrote on stderr (stderr.log),
// kept by the unconfined piagent that started it, in a folder the server
// cannot write (sandbox.ServerStateDir). get, doctor and the session notice
// read it, so a server the sandbox stopped is named with the path it was
// denied and the grant that lets it through, instead of failing silently.
package serverrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/lazyre"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/shquote"
)

// Files in the state folder.
const (
	ExitFile   = "exit.json"
	StderrFile = "stderr.log"
	// MaxStderr bounds the stderr kept: its last bytes.
	MaxStderr = 64 << 10
)

// States of a run.
const (
	Running = "running" // started; no end seen (or piagent itself was killed)
	Exited  = "exited"  // ended with status 0
	Stopped = "stopped" // ended by a signal piagent passed on (the adapter stopping it)
	Failed  = "failed"  // ended on its own with a status other than 0
)

// Record is exit.json.
type Record struct {
	Version   int    `json:"version"` // 1
	Server    string `json:"server"`
	Project   string `json:"project"`
	State     string `json:"state"`
	StartedAt string `json:"startedAt"`
	EndedAt   string `json:"endedAt,omitempty"`
	Code      int    `json:"code"`
	// Denied is the access the sandbox refused, as the server's stderr
	// reported it, when it did.
	Denied *Denied `json:"denied,omitempty"`
	// Line is the stderr line that tells why it ended (the denial, else
	// the last line).
	Line string `json:"line,omitempty"`
}

// Denied is one refused access.
type Denied struct {
	Path   string `json:"path"`
	Access string `json:"access"` // "read" or "write"
}

// Write records r in dir (0700), atomically.
func Write(dir string, r Record) error {
	r.Version = 1
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteMode(filepath.Join(dir, ExitFile), append(data, '\n'), 0o600)
}

// WriteStderr keeps the tail of a run's stderr in dir.
func WriteStderr(dir string, tail []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteMode(filepath.Join(dir, StderrFile), tail, 0o600)
}

// Read returns the last run recorded in dir; ok is false when there is none
// (or it cannot be read: a record is a hint, never a reason to fail).
func Read(dir string) (Record, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ExitFile))
	if err != nil {
		return Record{}, false
	}
	var r Record
	if json.Unmarshal(data, &r) != nil || r.Version != 1 {
		return Record{}, false
	}
	return r, true
}

// Exists reports whether dir holds a record.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ExitFile))
	return !errors.Is(err, fs.ErrNotExist)
}

// Tail keeps the last max bytes written to it.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Bytes is what is kept.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

var (
	// deniedLine: how Node, Python, Go, Rust and the shell say the kernel
	// refused an access.
	deniedLine = lazyre.New(`(?i)EACCES|EPERM|EROFS|permission denied|operation not permitted|read-only file system`)
	quotedPath = lazyre.New(`['"‘“](/[^'"’”]+)['"’”]`)
	barePath   = lazyre.New(`(?:^|[\s(=:])(/[^\s'"():,]+)`)
	readOnlyFS = lazyre.New(`(?i)EROFS|read-only file system`)
)

// FindDenied reads stderr for the last access the sandbox refused: the
// path, and whether it was a read (the path is one the profile hides,
// listed in hidden) or a write (anything else: a confined server may read
// everywhere else). Returns nil when stderr names none.
func FindDenied(stderr []byte, hidden []string) (*Denied, string) {
	lines := strings.Split(string(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !deniedLine().MatchString(l) {
			continue
		}
		path := ""
		if m := quotedPath().FindStringSubmatch(l); m != nil {
			path = m[1]
		} else if m := barePath().FindStringSubmatch(l); m != nil {
			path = m[1]
		}
		if path == "" {
			continue
		}
		path = filepath.Clean(path)
		access := "write"
		if !readOnlyFS().MatchString(l) {
			for _, h := range hidden {
				if paths.Within(h, path) {
					access = "read"
					break
				}
			}
		}
		return &Denied{Path: visible(path), Access: access}, visible(l)
	}
	return nil, ""
}

// visible replaces what could move a terminal or hide text (control
// characters, escapes, bidi and zero-width controls) with '?': a server's
// stderr reaches the person's terminal through get and doctor.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == utf8.RuneError:
			return '?'
		}
		return r
	}, s)
}

// LastLine is the last line of stderr that is not blank, shortened.
func LastLine(stderr []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stderr)), "\n")
	l := []rune(visible(strings.TrimSpace(lines[len(lines)-1])))
	if len(l) > 200 {
		l = append(l[:200], '…')
	}
	return string(l)
}

// GrantDir is the folder a grant for d names: the path itself when it is
// a folder, else the folder holding it.
func GrantDir(d Denied) string {
	if fi, err := os.Stat(d.Path); err == nil && fi.IsDir() {
		return d.Path
	}
	return filepath.Dir(d.Path)
}

// Text says how a failed run ended.
func (r Record) Text() string {
	s := fmt.Sprintf("ended under the sandbox with status %d (%s)", r.Code, r.EndedAt)
	if r.Denied != nil {
		s += fmt.Sprintf(": the sandbox refused to let it %s %s", r.Denied.Access, r.Denied.Path)
	} else if r.Line != "" {
		s += ": " + r.Line
	}
	return s
}

// Fix is the command that lets a refused access through, for prog
// ("piagent-mcp" or "piagent mcp"); without a known path, where the
// server's stderr is (dir is the state folder).
func (r Record) Fix(prog, dir string) string {
	if r.Denied == nil {
		return "read its stderr in " + filepath.Join(dir, StderrFile) + "; if the sandbox refused it something, '" + prog + " grant " + r.Server + " --read DIR' or '--write DIR' lets it through"
	}
	return prog + " grant " + shquote.Quote(r.Server) + " --" + r.Denied.Access + " " + shquote.Quote(GrantDir(*r.Denied))
}

// Notice is the session notice's line for a failed run.
func (r Record) Notice(prog, dir string) string {
	return fmt.Sprintf("piagent: MCP server %s %s; fix: %s", r.Server, r.Text(), r.Fix(prog, dir))
}
