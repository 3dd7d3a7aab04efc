package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/piagent/piagent/internal/ops"
)

// Exit statuses shared by every command.
// `help exit-codes` (exitCodesHelp) and the README say the same.
const (
	exitOK        = 0
	exitAttention = 1 // MCP cannot operate here, needs attention, a refused decision, or no such server
	exitUsage     = 2 // bad usage or refused input
	exitCancelled = 3 // the person answered no at a prompt (policy check: the call needs confirming)
)

// cliError is an error with the exit status and the hints it maps to. Every
// failure a command returns passes through report, the one place that turns
// errors into words and statuses.
type cliError struct {
	code  int
	err   error
	hints []string
	quiet bool // the command already printed its answer; only the status matters
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

// usageErr is bad usage or refused input: exit 2.
func usageErr(err error, hints ...string) error {
	return &cliError{code: exitUsage, err: err, hints: hints}
}

// usagef formats a usage error.
func usagef(format string, args ...any) error {
	return usageErr(fmt.Errorf(format, args...))
}

// refused is a decision the tool will not take, or a state that needs a
// person: exit 1.
func refused(err error, hints ...string) error {
	return &cliError{code: exitAttention, err: err, hints: hints}
}

// cancelled is a prompt the person declined: exit 3, nothing changed.
func cancelled(err error) error {
	return &cliError{code: exitCancelled, err: err}
}

// attention ends a command whose answer is already printed with status 1.
func attention() error {
	return &cliError{code: exitAttention, err: errors.New("needs attention"), quiet: true}
}

// report prints err the way age does and returns the exit status:
//
//	piagent-mcp: error: <what>
//	piagent-mcp: hint: <fix>
func report(w io.Writer, name string, err error) int {
	return reportAs(w, name, err, false)
}

// errorJSON is an error under --json, on stderr: the same words, for a
// program.
type errorJSON struct {
	Error struct {
		Message  string   `json:"message"`
		Hints    []string `json:"hints"`
		ExitCode int      `json:"exitCode"`
	} `json:"error"`
}

// reportAs is report, in JSON when asJSON (the command line asked --json).
func reportAs(w io.Writer, name string, err error, asJSON bool) int {
	if err == nil {
		return exitOK
	}
	code, hints, quiet := exitAttention, []string(nil), false
	var ce *cliError
	var oe *ops.Error
	switch {
	case errors.As(err, &ce):
		code, hints, quiet = ce.code, ce.hints, ce.quiet
	case errors.As(err, &oe):
		// the operations layer's refusal: its hints are data, worded here
		if oe.Kind == ops.Usage {
			code = exitUsage
		}
		for _, h := range oe.Hints {
			hints = append(hints, h.Render(mcpCmdOf(name)))
		}
	}
	if quiet {
		return code
	}
	if fh := fsHints(err); fh != nil {
		// The file system refused, whatever the command meant to do: the
		// command's own hints (repair the file, say) would mislead.
		hints = fh
	}
	if asJSON {
		var e errorJSON
		e.Error.Message, e.Error.ExitCode, e.Error.Hints = oneLine(err.Error()), code, []string{}
		for _, h := range hints {
			e.Error.Hints = append(e.Error.Hints, strings.Split(h, "\n")...)
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(e)
		return code
	}
	fmt.Fprintf(w, "%s: error: %s\n", name, oneLine(err.Error()))
	for _, h := range hints {
		for _, line := range strings.Split(h, "\n") {
			fmt.Fprintf(w, "%s: hint: %s\n", name, line)
		}
	}
	return code
}

func oneLine(s string) string {
	return strings.TrimRight(s, "\n")
}

// fsHints explains a write the file system refused: a read-only mount or a
// file this user may not write. nil for any other error.
func fsHints(err error) []string {
	path := ""
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		path = pe.Path
	case errors.As(err, &le):
		path = le.New
	default:
		return nil
	}
	switch {
	case errors.Is(err, syscall.EROFS):
		return []string{
			path + " is on a read-only file system: nothing was changed, and no file needs repair",
			"piagent writes its state under ~/.pi and the configuration files it edits; run it where those are writable",
		}
	case errors.Is(err, fs.ErrPermission):
		return []string{
			"this user may not write " + path + ": nothing was changed",
			"check the owner and mode of " + filepath.Dir(path) + " (ls -ld " + filepath.Dir(path) + ")",
		}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return []string{
			"the file system holding " + path + " is full: nothing was changed, and no file needs repair",
			"free some space, then run the command again",
		}
	}
	return nil
}

// storeHints are ops.StoreHints in words (they name no command).
func storeHints(path string, err error) []string {
	var out []string
	for _, h := range ops.StoreHints(path, err) {
		out = append(out, h.Text)
	}
	return out
}

// waitingFor tells the person, on stderr, who holds the lock of what a
// command waits for (atomicfile.LockOptions.Waiting).
func (a *app) waitingFor(what string) func(holder string) {
	return func(holder string) {
		fmt.Fprintf(a.env.Stderr, "%s: waiting for %s: held by %s\n", a.name, what, holder)
	}
}
