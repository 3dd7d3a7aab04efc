package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/launch"
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
