package cli

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
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

func (a *app) printSandbox(st ops.SandboxState, p ops.SandboxProfile) {
	w := a.env.Stdout
	if st.Mechanism == "" {
		fmt.Fprintf(w, "sandbox: none on this machine: %s\n", st.Missing)
		if p.NetworkOff {
			fmt.Fprintln(w, "network: off in your policy, and nothing here can apply it: every command the agent runs is refused")
			return
		}
		if p.Registries {
			fmt.Fprintln(w, "network: through piagent's proxy, which nothing here can apply: with \"network\": \"registries\" in your policy every command the agent runs is refused; by default they get the host's network")
		}
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
	holds("your secret stores (~/.ssh, ~/.aws/credentials, ~/.kube, …) and Pi's auth.json unreadable, one created or replaced while a command runs too", st.StoresUnreadable, "readable")
	holds("the project's secrets (.env, *.pem, *.key, …) hidden", st.SecretsHidden, "readable")
	holds("/tmp and /var/tmp read-only, TMPDIR private", st.PrivateTmp, "")
	holds("every capability of the command dropped, no_new_privs (the init above it, which keeps its own, is not dumpable: the command cannot ptrace it)", st.CapsDropped, "")
	holds("Unix sockets (and datagram socket pairs), io_uring, set-ID modes, device nodes and terminal injection refused (seccomp)", st.Seccomp && p.NoUnixSockets, "")
	holds("signals and abstract sockets scoped to the sandbox", st.Scoped, "Landlock ABI 6 or later is needed")
	holds("every process a command starts ends with it", st.NoSurvivors, "survivors possible: a detached process can outlive the call")
	hosts := "the package registries (" + strings.Join(ops.RegistryHosts(), ", ") + ")"
	if len(p.AllowHosts) > 0 {
		hosts += " and " + strings.Join(p.AllowHosts, ", ")
	}
	switch {
	case p.Registries && st.Namespaces != "":
		fmt.Fprintln(w, "  network: registries: a network namespace with its own loopback; HTTP(S)_PROXY names piagent's proxy, outside, which reaches "+hosts+"; everything else gets 403, logged for doctor; a raw TCP connection past it is refused at once (ECONNREFUSED) and logged, UDP and name lookups fail at once (not logged); at most 256 connections open at once; your own HTTPS_PROXY/HTTP_PROXY, if set, is its way out (NO_PROXY respected); this machine's services on 127.0.0.1 and ::1, and its abstract sockets, out of reach unless granted by port; vsock refused")
	case p.Registries && st.ABI >= ops.MinNetABI:
		fmt.Fprintln(w, "  network: registries, without a namespace: Landlock lets TCP connect only to the proxy's port (random per command), which reaches "+hosts+" (any other port: EACCES, not logged); seccomp refuses UDP, SCTP and every family but IPv4, IPv6 and netlink")
		fmt.Fprintln(w, "  not covered without a namespace: Landlock filters connect by port, never by address: a service of this machine's, or a host, listening on the proxy's port (or a granted one) is reachable; the command cannot connect to its own listeners on loopback; abstract sockets are scoped only with Landlock ABI 6")
	case p.Registries:
		fmt.Fprintf(w, "  network: registries cannot be applied here (no namespace, Landlock ABI %d: TCP rules need ABI %d): with it named in your policy every command is refused; by default commands get the host's network, this machine's services included\n", st.ABI, ops.MinNetABI)
	case !p.NetworkOff:
		fmt.Fprintln(w, "  network: on: commands reach the network and this machine's own services on 127.0.0.1 and ::1 (a dev server, a database, a debugger port); \"network\": \"registries\" (the default) or \"off\" in ~/.pi/piagent-policy.json takes it away")
	case st.Namespaces != "":
		fmt.Fprintln(w, "  network: off: a network namespace with only its own loopback; a connection to any other address is refused at once (ECONNREFUSED, not logged); this machine's services and abstract sockets are out of reach; vsock refused")
	default:
		fmt.Fprintln(w, "  network: off: no namespace here, so seccomp refuses every socket, whatever its family (a command cannot listen on loopback either)")
	}
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
	if p.Name == "agent" && len(p.Hidden)+len(p.HiddenDirs) > 0 {
		fmt.Fprintln(w, "  (a secret store a command of this project needs, kubectl's ~/.kube: piagent-mcp grant --agent --read PATH)")
	}
	list("not protected by the sandbox (the command could create them)", p.Unprotected)
	list("environment", p.Env)
}

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "this user"
}
