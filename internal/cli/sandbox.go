package cli

import (
	"errors"
	"fmt"
	"os"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

func (a *app) sandboxCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a command confined by the operating system (Landlock on Linux)",
		Args:  cobra.NoArgs,
	}
	exec := &cobra.Command{
		Use:   "exec [--project DIR] -- COMMAND [ARGS...]",
		Short: "Confine this process to the agent profile, then run COMMAND in its place",
		Long: `Confine this process to the agent profile, then run COMMAND in its place.

The profile is derived from piagent's registry and the project, never from
the repository: COMMAND and everything it starts may write only the
project, the temporary folders and private package caches; every file that
decides what runs stays read-only, Unix-socket connections are refused and,
where a mount namespace is available, registered files inside the project
are mounted read-only and its secrets hidden. Standard streams, the exit
status and signals pass through: COMMAND replaces piagent.`,
		Example: `  piagent sandbox exec -- /bin/bash -c 'go test ./...'
  piagent sandbox exec --project ~/src/app -- npm ci`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs a COMMAND after --", c.CommandPath())
			}
			return nil
		},
	}
	exec.Flags().String("project", "", "the project directory (default: the working directory)")
	auto := exec.Flags().Bool("auto", false, "where no sandbox applies, run COMMAND unconfined with a warning instead of refusing")
	profile := exec.Flags().String("profile", "agent", "agent (the agent's commands) or server (an MCP server piagent starts)")
	server := exec.Flags().String("server", "", "with --profile server: the server's name, for its grants and private caches")
	keepEnv := exec.Flags().StringSlice("keep-env", nil, "variables COMMAND keeps beyond the default set and your policy's passEnv (the launcher names a server's own definition's keys)")
	exec.RunE = run(func(c *cobra.Command, args []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		return fromExec(ops.SandboxExec(a.execEnv(), ops.ExecOptions{Project: dir, Profile: *profile, Server: *server, Auto: *auto, KeepEnv: *keepEnv}, args))
	})
	status := &cobra.Command{
		Use:   "status",
		Short: "Say what the sandbox enforces on this machine, and the agent profile for this project",
		Args:  cobra.NoArgs,
	}
	status.Flags().String("project", "", "the project directory (default: the working directory)")
	asJSON := status.Flags().Bool("json", false, "print JSON")
	status.RunE = run(func(c *cobra.Command, _ []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		st, p := a.op().SandboxStatus(dir, a.env.Environ)
		if *asJSON {
			return a.printJSONValue(struct {
				Status  ops.SandboxState   `json:"status"`
				Profile ops.SandboxProfile `json:"profile"`
			}{st, p})
		}
		render.Sandbox(a.env.Stdout, st, p, fmt.Sprintf("%s (uid %d)", userName(), os.Getuid()))
		if st.Mechanism == "" {
			return &cliError{code: 1, err: errors.New("no sandbox applies here: " + st.Missing), quiet: true}
		}
		return nil
	})
	c.AddCommand(exec, status)
	return c
}

// sandboxFast runs `piagent sandbox exec [--auto] [--project DIR]
// [--profile agent|server] [--server NAME] -- COMMAND...` without building
// the command tree: it starts before every command the agent runs and every
// server piagent starts (piagent-sandbox does the same in a smaller binary).
// Anything else (help, other flags) goes the usual way.
func (a *app) sandboxFast(args []string) (int, bool) {
	if a.name != "piagent" || len(args) < 3 || args[0] != "sandbox" || args[1] != "exec" {
		return 0, false
	}
	o, argv, ok := ops.ParseExec(a.execEnv(), args[2:])
	if !ok {
		return 0, false
	}
	code, words := ops.ExecWords(a.name, ops.SandboxExec(a.execEnv(), o, argv))
	fmt.Fprint(a.env.Stderr, words)
	return code, true
}

// execEnv is this command's environment as sandbox exec sees it.
func (a *app) execEnv() ops.ExecEnv {
	return ops.ExecEnv{Home: a.env.Home, Dir: a.env.Dir, Environ: a.env.Environ, Stderr: a.env.Stderr}
}

// fromExec is a sandbox exec error as this command reports it.
func fromExec(err error) error {
	var se *ops.ExecError
	if errors.As(err, &se) {
		return &cliError{code: se.Code, err: se.Err, hints: se.Hints, quiet: se.Quiet}
	}
	return err
}

// projectNotHome refuses a project that is the home folder or holds it.
func (a *app) projectNotHome(project string) error {
	return fromExec(ops.ProjectNotHome(a.env.Home, project))
}

// tempDir is the temporary folder the sandbox keeps its private folders in.
func tempDir(env Env) string {
	return ops.TempDir(env.Environ)
}

// executables are the running binary and piagent's other binaries beside it.
func executables() []string { return ops.Executables() }

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "this user"
}
