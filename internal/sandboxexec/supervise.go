package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/piagent/piagent/internal/sandbox"
	"github.com/piagent/piagent/internal/serverrun"
)

// serverChildVar marks the confined child of a server's supervisor. It
// never reaches the server: the sandbox passes an allow-list of variables.
const serverChildVar = "PIAGENT_SERVER_CHILD"

// forwarded are the signals passed on to the server.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// superviseServer runs sandbox exec --profile server again as a child,
// stays outside the sandbox itself, and records how the server ended and
// the tail of its stderr (package serverrun) where the server cannot write:
// so that get, doctor and the session notice can say that the sandbox
// stopped it, and the grant that lets it through. Standard input and
// output are the child's own (the MCP channel, not copied); stderr passes
// through and is kept; signals are passed on; the exit status is the
// child's.
func superviseServer(env Env, o Options, argv []string, p sandbox.Profile, dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return refused(fmt.Errorf("nothing was run: cannot find piagent's own executable: %w", err))
	}
	project := o.Project
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	// piagent-sandbox exec …, or piagent sandbox exec …
	args := []string{filepath.Base(exe), "exec"}
	if filepath.Base(exe) != "piagent-sandbox" {
		args = []string{"piagent", "sandbox", "exec"}
	}
	args = append(args, "--project", o.Project, "--profile", "server", "--server", o.Server)
	if o.Auto {
		args = append(args, "--auto")
	}
	for _, k := range o.KeepEnv {
		args = append(args, "--keep-env", k)
	}
	args = append(append(args, "--"), argv...)
	tail := serverrun.NewTail(serverrun.MaxStderr)
	stdin, stdout := env.Stdin, env.Stdout
	if stdin == nil {
		stdin = os.Stdin
	}
	if stdout == nil {
		stdout = os.Stdout
	}
	cmd := &exec.Cmd{
		Path:   exe,
		Args:   args,
		Env:    append(withoutVar(env.Environ, serverChildVar), serverChildVar+"=1"),
		Dir:    env.Dir,
		Stdin:  stdin,
		Stdout: stdout,
		Stderr: io.MultiWriter(passOn{env.Stderr}, tail),
		// The child ends with this process (where the system can say so).
		SysProcAttr: childAttr(),
	}
	stamp := func() string { return env.now().UTC().Format("2006-01-02T15:04:05Z") }
	rec := serverrun.Record{Server: o.Server, Project: project, State: serverrun.Running, StartedAt: stamp()}
	if err := serverrun.Write(dir, rec); err != nil {
		fmt.Fprintf(env.Stderr, "piagent: warning: cannot record %s's run in %s: %v\n", o.Server, dir, err)
	}
	runtime.LockOSThread() // Pdeathsig follows the thread that started the child
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return refused(fmt.Errorf("nothing was run: %w", err))
	}
	stopped := make(chan bool, 1)
	done := make(chan struct{})
	go func() {
		got := false
		for {
			select {
			case s := <-sigs:
				got = true
				_ = cmd.Process.Signal(s)
			case <-done:
				stopped <- got
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	code := 0
	if st := cmd.ProcessState; st != nil {
		code = exitCode(st)
	} else if werr != nil {
		return refused(fmt.Errorf("running %s: %w", o.Server, werr))
	}
	rec.EndedAt = stamp()
	rec.Code = code
	switch {
	case <-stopped:
		rec.State = serverrun.Stopped
	case code == 0:
		rec.State = serverrun.Exited
	default:
		rec.State = serverrun.Failed
	}
	out := tail.Bytes()
	hidden := append(append(append([]string{}, p.Denied...), p.Hidden...), p.HiddenDirs...)
	if d, line := serverrun.FindDenied(out, hidden); d != nil {
		rec.Denied, rec.Line = d, line
	} else if len(out) > 0 {
		rec.Line = serverrun.LastLine(out)
	}
	_ = serverrun.WriteStderr(dir, out)
	_ = serverrun.Write(dir, rec)
	if code == 0 {
		return nil
	}
	return &Error{Code: code, Err: errors.New("the server ended"), Quiet: true}
}

func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// passOn writes to w and ignores its errors: a reader that went away must
// not stop the copy that keeps the server's stderr.
type passOn struct{ w io.Writer }

func (p passOn) Write(b []byte) (int, error) {
	_, _ = p.w.Write(b)
	return len(b), nil
}

// withoutVar is environ without any assignment of key.
func withoutVar(environ []string, key string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
