package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
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
		return a.sandboxExec(sandboxOpts{project: dir, profile: *profile, server: *server, auto: *auto, keepEnv: *keepEnv}, args)
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
		st := sandbox.Probe()
		p := a.agentProfile(dir)
		if *asJSON {
			enc := json.NewEncoder(a.env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Status  sandbox.Status  `json:"status"`
				Profile sandbox.Profile `json:"profile"`
			}{st, p})
		}
		a.printSandbox(st, p)
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
// server piagent starts. Anything else (help, other flags) goes the usual way.
func (a *app) sandboxFast(args []string) (int, bool) {
	if a.name != "piagent" || len(args) < 3 || args[0] != "sandbox" || args[1] != "exec" {
		return 0, false
	}
	o := sandboxOpts{project: a.env.Dir, profile: "agent"}
	rest := args[2:]
	for len(rest) > 0 && rest[0] != "--" {
		flag, val, hasVal := strings.Cut(rest[0], "=")
		takes := func() bool {
			if hasVal {
				rest = rest[1:]
				return true
			}
			if len(rest) < 2 {
				return false
			}
			val, rest = rest[1], rest[2:]
			return true
		}
		switch {
		case flag == "--auto" && !hasVal:
			o.auto, rest = true, rest[1:]
		case flag == "--project" && takes():
			o.project = val
		case flag == "--profile" && takes():
			o.profile = val
		case flag == "--server" && takes():
			o.server = val
		case flag == "--keep-env" && takes():
			o.keepEnv = append(o.keepEnv, strings.Split(val, ",")...)
		default:
			return 0, false
		}
	}
	if len(rest) < 2 {
		return 0, false
	}
	o.project = paths.Abs(a.env.Dir, paths.Expand(a.env.Home, o.project))
	if fi, err := os.Stat(o.project); err != nil || !fi.IsDir() {
		return 0, false // the usual path words the error
	}
	return report(a.env.Stderr, a.name, a.sandboxExec(o, rest[1:])), true
}

type sandboxOpts struct {
	project, profile, server string
	auto                     bool
	keepEnv                  []string
}

// sandboxExec confines this process and runs argv in its place. With auto,
// a machine where no sandbox applies runs argv unconfined and says so on
// stderr; without it, nothing runs.
func (a *app) sandboxExec(o sandboxOpts, argv []string) error {
	if err := a.projectNotHome(o.project); err != nil {
		return err
	}
	var p sandbox.Profile
	// The person's policy: which of Pi's variables pass, and whether the
	// full boundary is required. One that cannot be read passes nothing
	// beyond the default set, and refuses a command without namespaces.
	pol, perr := policy.LoadSettings(a.env.Home, o.project)
	if perr == nil && pol.Err() != nil {
		perr = pol.Err()
	}
	pass := append([]string{}, o.keepEnv...)
	if perr == nil {
		pass = append(pass, pol.PassEnv()...)
	}
	switch o.profile {
	case "agent":
		p = a.agentProfile(o.project)
	case "server":
		if o.server == "" {
			return usagef("--profile server needs --server NAME")
		}
		var err error
		var g grant.Grant
		if p, g, err = a.serverProfile(o.project, o.server); err != nil {
			return refused(fmt.Errorf("nothing was run: %w", err))
		}
		if a.env.Getenv(serverChildVar) != "1" {
			// Run it as a child, and record how it ended (serverrun.go).
			return a.superviseServer(o, argv, p)
		}
		pass = append(pass, g.Env...)
	default:
		return usagef("--profile %q: want agent or server", o.profile)
	}
	environ := sandbox.FilterEnv(a.env.Environ, pass)
	auto := o.auto
	err := sandbox.ExecWith(p, argv, environ, sandbox.ExecOptions{Warn: a.env.Stderr, NoNamespace: func(cause string) error {
		// Asked only here: a person who chose the full boundary is not
		// given Landlock alone in its place.
		if perr != nil || pol.Sandbox() == policy.SandboxNamespaces {
			return refused(fmt.Errorf("no namespace can be made here (%s) and your policy requires them (\"sandbox\": \"namespaces\"), or it cannot be read; nothing was run", cause))
		}
		return nil
	}})
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) && auto {
		fmt.Fprintf(a.env.Stderr, "piagent: warning: %s; this command runs checked by the command reader alone\n", err)
		err = sandbox.ExecUnconfined(argv, environ)
	}
	if errors.As(err, &ue) {
		return refused(err, "nothing was run; 'piagent sandbox status' says what this machine lacks")
	}
	return refused(fmt.Errorf("nothing was run: %w", err))
}

// agentProfile derives the agent profile for a project from the registry.
func (a *app) agentProfile(project string) sandbox.Profile {
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	return sandbox.Agent(a.profileInput(project))
}

// profileInput is what a profile of project is derived from.
func (a *app) profileInput(project string) sandbox.Input {
	getenv := paths.Getenv(a.env.Getenv)
	agentDir := paths.AgentDir(a.env.Home, project, getenv)
	cfg := paths.ConfigDirName(getenv)
	var ancestors []string
	for d := filepath.Dir(project); d != filepath.Dir(d); d = filepath.Dir(d) {
		ancestors = append(ancestors, filepath.Join(d, ".mcp.json"), filepath.Join(d, cfg, "mcp.json"))
	}
	reg := registry.List(registry.Input{Home: a.env.Home, AgentDir: agentDir, Project: project, ConfigDir: cfg,
		Consulted: ancestors, Binaries: executables(), TempDir: tempDir(a.env)})
	return sandbox.Input{Home: a.env.Home, AgentDir: agentDir, Project: project, ConfigDir: cfg,
		TempDir: tempDir(a.env), Getenv: a.env.Getenv, Registry: reg}
}

// serverProfile derives the profile of server NAME in project, with the
// grants a person recorded for it.
func (a *app) serverProfile(project, name string) (sandbox.Profile, grant.Grant, error) {
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	g, err := grant.Of(a.env.Home, project, name)
	if err != nil {
		return sandbox.Profile{}, g, err
	}
	in := a.profileInput(project)
	return sandbox.Server(in, name, g.Read, g.Write), g, nil
}

// tempDir is the system temporary folder as the command would see it.
func tempDir(env Env) string {
	if t := env.Getenv("TMPDIR"); t != "" && filepath.IsAbs(t) {
		return filepath.Clean(t)
	}
	return "/tmp"
}

func (a *app) printSandbox(st sandbox.Status, p sandbox.Profile) {
	w := a.env.Stdout
	if st.Mechanism == "" {
		fmt.Fprintf(w, "sandbox: none on this machine: %s\n", st.Missing)
		fmt.Fprintln(w, "commands the agent runs are checked by the command reader alone; set \"sandbox\": \"required\" in ~/.pi/piagent-policy.json to block them instead")
		return
	}
	fmt.Fprintf(w, "sandbox: %s ABI %d, for %s (uid %d)\n", st.Mechanism, st.ABI, userName(), os.Getuid())
	ns := "none: " + st.NamespaceMissing
	switch st.Namespaces {
	case "root":
		ns = "yes (mount and PID namespaces: this process holds CAP_SYS_ADMIN)"
	case "user":
		ns = "yes (an unprivileged user namespace, with mount and PID namespaces)"
	}
	fmt.Fprintf(w, "  namespaces: %s\n", ns)
	holds := func(what string, ok bool, otherwise string) {
		if ok {
			fmt.Fprintf(w, "  holds: %s\n", what)
		} else {
			fmt.Fprintf(w, "  does not hold: %s (%s)\n", what, otherwise)
		}
	}
	holds("registered files inside the project (.git/hooks, .git/config, .pi) read-only", st.MountNamespace, "watched and blocked after a change, not locked")
	holds("every mount read-only but the writable folders: no chmod, chown or utimes of your files", st.HomeReadOnly, "Landlock refuses writes, not metadata changes")
	holds("the project's secrets and Pi's auth.json hidden", st.SecretsHidden, "readable")
	holds("/tmp and /var/tmp read-only, TMPDIR private", st.PrivateTmp, "")
	holds("every capability dropped, no_new_privs", st.CapsDropped, "")
	holds("Unix sockets, io_uring, set-ID modes, device nodes and terminal injection refused (seccomp)", st.Seccomp && p.NoUnixSockets, "")
	holds("signals and abstract sockets scoped to the sandbox", st.Scoped, "Landlock ABI 6 or later is needed")
	holds("every process a command starts ends with it", st.NoSurvivors, "survivors possible: a detached process can outlive the call")
	if st.Namespaces == "" {
		fmt.Fprintln(w, "  set \"sandbox\": \"namespaces\" in ~/.pi/piagent-policy.json to refuse commands instead of running them without namespaces")
	}
	list := func(title string, ps []string) {
		if len(ps) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n  %s\n", title, strings.Join(ps, "\n  "))
	}
	list("writable", p.Writable)
	list("read-only inside writable folders", p.ReadOnly)
	list("hidden", append(append([]string{}, p.Hidden...), p.HiddenDirs...))
	list("not protected by the sandbox (the command could create them)", p.Unprotected)
	list("environment", p.Env)
}

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "this user"
}

// projectNotHome refuses a project that is the home folder or holds it:
// the agent's commands may write the project, and the home holds shell
// start-up files, Pi's settings and piagent's own state.
func (a *app) projectNotHome(project string) error {
	home := a.env.Home
	if r, err := filepath.EvalSymlinks(home); err == nil {
		home = r
	}
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	if home == "" || !paths.Within(project, home) {
		return nil
	}
	what := "is your home folder"
	if project != home {
		what = "holds your home folder"
	}
	return refused(fmt.Errorf("%s %s: the agent's commands may write the project, and your home holds your shell's start-up files, Pi's settings and piagent's approvals; nothing was run", project, what),
		"start Pi in a project folder: cd ~/src/PROJECT && piagent pi")
}
