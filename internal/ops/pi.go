package ops

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/shquote"
)

// Held is a repository server piagent pi holds back, with the command that
// lets it run.
type Held = launch.Held

// piPackageCommands start no session; they need no gate.
var piPackageCommands = map[string]bool{"install": true, "remove": true, "uninstall": true, "update": true, "list": true, "config": true}

// PiArgs reads the arguments piagent pi passes to Pi: one of Pi's package
// commands (install, remove, update, list, config) starts no session and
// is passed through as it is (pass); Pi's own MCP commands, and an
// --mcp-config of the person's, are refused.
func PiArgs(args []string) (pass bool, err error) {
	if len(args) > 0 && piPackageCommands[args[0]] {
		return true, nil
	}
	if len(args) > 0 && args[0] == "mcp" {
		// Pi's own MCP commands never load extensions and connect servers
		// directly, approved or not.
		return false, &Error{Kind: Usage, Err: errors.New("piagent pi does not run Pi's own 'pi mcp' commands: they connect MCP servers without asking the gate"),
			Hints: texts("'piagent mcp list' shows every server and its state; 'piagent mcp doctor' says what each needs")}
	}
	for _, arg := range args {
		if arg == "--mcp-config" || strings.HasPrefix(arg, "--mcp-config=") {
			return false, &Error{Kind: Usage, Err: errors.New("piagent pi sets --mcp-config itself"),
				Hints: texts("put servers in your own config files (~/.pi/agent/mcp.json, ~/.config/mcp/mcp.json); piagent pi passes every approved one to Pi")}
		}
	}
	return false, nil
}

// LaunchConfig rewrites the configuration of what may run that piagent pi
// gives Pi for the project at dir, and returns its file.
func (o *Ops) LaunchConfig(dir string) (string, error) {
	path, _, _, err := launch.Generate(o.Home, dir, o.getenv, o.Confine(dir))
	if err != nil {
		return "", refused(fmt.Errorf("cannot write the launch configuration: %w", err))
	}
	return path, nil
}

// Session is a session Pi wrote: its id, and the folder given with
// --session-dir (Dir; "" when Pi chose its own).
type Session struct {
	ID  string
	Dir string
}

// LastSession is the session Pi wrote during a run that began at start:
// the newest session file in Pi's session folder for cwd
// (<agentDir>/sessions/--<cwd with / as ->--/, or --session-dir) changed
// since start, named <timestamp>_<id>.jsonl. ok is false when Pi wrote
// none.
func LastSession(agentDir, cwd string, args []string, start time.Time) (s Session, ok bool) {
	sessionDir, custom := "", false
	for i, arg := range args {
		if arg == "--" {
			break
		}
		if v, ok := strings.CutPrefix(arg, "--session-dir="); ok {
			sessionDir, custom = v, true
		} else if arg == "--session-dir" && i+1 < len(args) {
			sessionDir, custom = args[i+1], true
		}
	}
	if !custom {
		safe := "--" + strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(filepath.Clean(cwd), "/\\")) + "--"
		sessionDir = filepath.Join(agentDir, "sessions", safe)
	} else if !filepath.IsAbs(sessionDir) {
		sessionDir = filepath.Join(cwd, sessionDir)
	}
	entries, err := os.ReadDir(sessionDir)
	if err != nil {
		return Session{}, false
	}
	id, newest := "", start.Add(-time.Second) // file times may be coarser than the clock
	for _, e := range entries {
		name := e.Name()
		_, rest, ok := strings.Cut(name, "_")
		if !ok || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(newest) {
			continue
		}
		id, newest = strings.TrimSuffix(rest, ".jsonl"), info.ModTime()
	}
	if custom {
		s.Dir = sessionDir
	}
	s.ID = id
	return s, id != ""
}

// ResumeCommand is the command that resumes, through the launcher, the
// session Pi wrote during a run that began at start (LastSession); "" when
// Pi wrote none, or its id is not a word the command can carry as it is.
func ResumeCommand(agentDir, cwd string, args []string, start time.Time) string {
	s, ok := LastSession(agentDir, cwd, args, start)
	if !ok || !safeWord(s.ID) {
		return ""
	}
	cmd := "piagent pi"
	if s.Dir != "" {
		cmd += " --session-dir " + shquote.Quote(s.Dir)
	}
	return cmd + " --session " + s.ID
}

// safeWord reports whether s can be printed as a shell word as it is.
func safeWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return s != ""
}

// PiStart is what Pi starts with under the launcher: its environment, the
// arguments before the person's, and the record of the project's git and
// Pi files taken before Pi and any server start (the helper compares
// against it, and AfterSession when Pi exits).
type PiStart struct {
	Env      []string
	Front    []string
	Base     *Snapshot
	BaseFile string
}

// PrepareStart is Pi's start for the launch l in dir: environ with the
// launch's variables set (Env), then the record of the project's files
// (TakeBaseline), named to Pi's processes by EnvBaseline.
func (o *Ops) PrepareStart(l Launch, dir string, environ []string) (PiStart, error) {
	vars, front, err := o.Env(l)
	if err != nil {
		return PiStart{}, err
	}
	base, baseFile, err := o.TakeBaseline(dir, l.Gate.View.ConfigDir)
	if err != nil {
		return PiStart{}, err
	}
	vars[EnvBaseline] = baseFile
	return PiStart{Env: WithEnv(environ, vars), Front: front, Base: base, BaseFile: baseFile}, nil
}

// WithEnv is environ with the given variables set, every earlier
// assignment of them removed; the set ones come last, by name.
func WithEnv(environ []string, set map[string]string) []string {
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}
