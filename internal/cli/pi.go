package cli

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

const piLong = `Starts Pi so that the MCP adapter can only ever see approved servers.

piagent computes the approval gate for the working directory, writes the
configuration of what may run (your own servers, and the repository's servers
that are approved and unchanged) to ~/.pi/piagent/launch/, and starts Pi with
PI_MCP_CONFIG_MODE=exclusive and --mcp-config pointing at that file. The
adapter then reads no repository file at all: no unapproved server is started
at startup, by the cache bootstrap, by eager or keep-alive lifecycles, by
host-config discovery, Pi packages or plugins, or by any tool.

Before Pi starts, piagent lists the repository servers it held back and the
command that approves each. Approve in a terminal, or inside the session with
/piagent-mcp approve NAME: the session reloads and the server is available.

Every argument is passed to Pi unchanged (so 'piagent pi --help' is Pi's
help); Pi's exit status is piagent's. Pi is found through PIAGENT_PI (an
executable, for example the npm package's dist/bundle/cli.js), then 'pi' on
PATH. Pi's package commands (install, remove, update, list, config) are passed
through as they are.`

func (a *app) piCommand() *cobra.Command {
	c := &cobra.Command{
		Use: "pi [PI ARGS...]",
		Example: `  piagent pi
  piagent pi -p "summarise the open issues"`,
		Short:              "Start Pi with only approved MCP servers visible to its adapter (--piagent-help for this help)",
		Long:               piLong,
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
	}
	c.RunE = run(func(c *cobra.Command, args []string) error {
		for _, arg := range args {
			if arg == "--piagent-help" {
				return c.Help()
			}
		}
		return a.launchPi(args)
	})
	return c
}

func (a *app) launchPi(args []string) error {
	if err := a.projectNotHome(a.env.Dir); err != nil {
		return err
	}
	pi, _, err := a.op().FindPi()
	if err != nil {
		return err
	}
	pass, err := ops.PiArgs(args)
	if err != nil {
		return err
	}
	if pass {
		return a.runPi(pi, args, a.env.Environ)
	}
	dir := a.env.Dir
	l, err := a.op().PlanLaunch(dir, pi, args)
	if err != nil {
		return err
	}
	g, plan, agentDir := l.Gate, l.Plan, l.AgentDir
	// A configuration file the adapter skips takes its servers with it:
	// say so before Pi starts, with the file, line and column.
	for _, sk := range g.View.Skipped {
		where := render.At(ops.Display(a.env.Home, g.View.Cwd, sk.Path), sk.Line, sk.Column)
		fmt.Fprintf(a.env.Stderr, "piagent: warning: %s is skipped (%s): the servers it declares are off in this session; fix the file and start again\n", where, sk.Reason)
	}
	if a.env.Getenv("PIAGENT_NO_MCP_NOTICE") != "1" {
		if plan.Notice != "" {
			fmt.Fprintln(a.env.Stderr, plan.Notice)
		} else {
			// the fixes as the notice words them, for piagent-mcp
			for _, l := range launchNotice(a.op().List(g, "piagent-mcp", true).Blocks, l.Held) {
				fmt.Fprintln(a.env.Stderr, l)
			}
		}
	}
	ps, err := a.op().PrepareStart(l, dir, a.env.Environ)
	if err != nil {
		return err
	}
	start := a.env.now()
	err = a.runPi(pi, append(ps.Front, args...), ps.Env)
	a.afterPi(dir, ps.Base, ps.BaseFile, start)
	if a.env.Interactive {
		// Pi's own exit hint says 'pi --session ID', which starts Pi
		// without the launcher: say how to come back through it.
		if hint := ops.ResumeCommand(agentDir, dir, args, start); hint != "" {
			fmt.Fprintf(a.env.Stderr, "piagent: to resume this session with only approved MCP servers: %s\n", hint)
		}
	}
	return err
}

// launchNotice is what piagent pi prints before Pi starts: every full block,
// and every repository server held back with the command that lets it run.
func launchNotice(blocks []ops.FullBlock, held []ops.Held) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, fmt.Sprintf("piagent: every tool call is blocked: %s; %s", b.Reason, b.Fix))
	}
	waiting := 0
	for _, h := range held {
		if h.State == ops.Rejected {
			out = append(out, fmt.Sprintf("piagent: held back MCP server %s (rejected for this project); to use it after all: %s", h.Server, h.Approve))
			continue
		}
		waiting++
		out = append(out, fmt.Sprintf("piagent: held back MCP server %s (%s: %s); approve: %s", h.Server, h.State, h.Reason, h.Approve))
	}
	if waiting > 0 {
		out = append(out, "piagent: or, inside Pi, /piagent-mcp approve NAME: the session reloads with the server")
	}
	return out
}

// forwarded are the signals passed on to Pi. A terminal's Ctrl-C reaches Pi
// directly too (same process group); Pi treats a second SIGINT like the
// first.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// runPi runs Pi with stdio inherited and returns its exit status as this
// command's: 128+n when a signal ended it.
func (a *app) runPi(pi string, args []string, env []string) error {
	cmd := exec.Command(pi, args...)
	cmd.Dir = a.env.Dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.env.Stdin, a.env.Stdout, a.env.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return refused(fmt.Errorf("cannot start %s: %w", pi, err),
			"if it is a script, check its #! line (Pi's cli.js needs node on PATH)")
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	code := 0
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = st.ExitCode()
		}
	} else if err != nil {
		return refused(fmt.Errorf("running %s: %w", pi, err))
	}
	if code == 0 {
		return nil
	}
	return &cliError{code: code, err: fmt.Errorf("pi exited with status %d", code), quiet: true}
}

func (a *app) launchConfigCommand() *cobra.Command {
	c := &cobra.Command{
		Use:    "launch-config",
		Short:  "Rewrite the MCP configuration piagent pi gives Pi, and print its path",
		Args:   cobra.NoArgs,
		Hidden: true,
	}
	c.Flags().String("project", "", "the project directory (default: the working directory)")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		path, err := a.op().LaunchConfig(dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.env.Stdout, path)
		return nil
	})
	return c
}

// afterPi compares the project's git and Pi files with the session's
// baseline once Pi has exited and puts back what changed
// (ops.AfterSession), then says what is in quarantine.
func (a *app) afterPi(dir string, s *ops.Snapshot, file string, start time.Time) {
	made, err := a.op().AfterSession(dir, s, file, start)
	if err != nil {
		fmt.Fprintf(a.env.Stderr, "piagent: warning: cannot compare the project's git and Pi files with the session's start: %v; look at them yourself (git status, ls -la .git/hooks .pi)\n", err)
	}
	for _, q := range made {
		fmt.Fprintf(a.env.Stderr, "piagent: warning: during this session %s changed (found %s); piagent put back the version from the session's start and moved what it found to %s\n",
			strings.Join(ops.ChangedPaths(q), ", "), q.Source, a.op().QuarantineFolder(q.ID))
		fmt.Fprintf(a.env.Stderr, "piagent: hint: look before the next session: piagent quarantine show %s; then piagent quarantine accept %s if it was yours, or piagent quarantine discard %s\n", q.ID, q.ID, q.ID)
	}
}
