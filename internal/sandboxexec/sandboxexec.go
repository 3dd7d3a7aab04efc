// Package sandboxexec is `sandbox exec`: it derives the profile of a
// project (or of one of its servers), filters the environment and runs a
// command confined. It starts before every command the agent runs and
// every server piagent starts, so it imports only what confinement needs:
// the small piagent-sandbox binary is this package and its init, and
// `piagent sandbox exec` calls the same code.
package sandboxexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/sandbox"
)

// Names of piagent's binaries. Each is registered wherever it is installed:
// the person runs one next, so a command that replaced it would run
// unconfined then.
var Binaries = []string{"piagent", "piagent-mcp", "piagent-sandbox", "piagent-netproxy"}

// Environment variables set by piagent pi that the sandbox reads (package
// launch names them for the launcher).
const (
	EnvLauncher  = "PIAGENT_LAUNCHER" // "1": Pi was started by piagent pi
	EnvSystemTmp = "PIAGENT_TMPDIR"   // the TMPDIR piagent pi was started with
)

// Env is what a run sees of its process.
type Env struct {
	Home    string
	Dir     string // the working directory, absolute
	Environ []string
	Stdin   io.Reader // nil: this process's
	Stdout  io.Writer // nil: this process's
	Stderr  io.Writer
	Now     func() time.Time // nil: time.Now
}

// Getenv looks a variable up in Environ; the last assignment wins.
func (e Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

// LookupEnv is Getenv that tells an empty value from an unset one.
func (e Env) LookupEnv(key string) (string, bool) {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Options are sandbox exec's flags.
type Options struct {
	Project string // absolute
	Profile string // "agent" or "server"
	Server  string // the server's name, for the server profile
	Auto    bool   // where no sandbox applies, run unconfined and say so
	KeepEnv []string
	// EnvOnly runs a server through a container runtime (whose daemon
	// could not be confined anyway) unconfined, with the server's
	// environment allow-list alone: Pi's keys do not reach the runtime.
	EnvOnly bool
}

// Error is a refusal (Code 1) or a usage error (Code 2), with the fixes;
// a Quiet one (a server's own exit status) prints nothing.
type Error struct {
	Code  int
	Err   error
	Hints []string
	Quiet bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func refused(err error, hints ...string) error { return &Error{Code: 1, Err: err, Hints: hints} }

// Parse reads sandbox exec's arguments after "exec": [--auto] [--project
// DIR] [--profile agent|server] [--server NAME] [--keep-env VARS] -- COMMAND...
// It reports false for anything else (help, an unknown flag, no command, a
// project that is not a folder), which the full command line words.
func Parse(env Env, args []string) (Options, []string, bool) {
	o := Options{Project: env.Dir, Profile: "agent"}
	rest := args
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
			o.Auto, rest = true, rest[1:]
		case flag == "--env-only" && !hasVal:
			o.EnvOnly, rest = true, rest[1:]
		case flag == "--project" && takes():
			o.Project = val
		case flag == "--profile" && takes():
			o.Profile = val
		case flag == "--server" && takes():
			o.Server = val
		case flag == "--keep-env" && takes():
			o.KeepEnv = append(o.KeepEnv, strings.Split(val, ",")...)
		default:
			return o, nil, false
		}
	}
	if len(rest) < 2 {
		return o, nil, false
	}
	o.Project = paths.Abs(env.Dir, paths.Expand(env.Home, o.Project))
	if fi, err := os.Stat(o.Project); err != nil || !fi.IsDir() {
		return o, nil, false
	}
	return o, rest[1:], true
}

// Run confines this process's command and runs argv: it returns only when
// nothing ran, or (with Auto, where no sandbox applies) after argv ran
// unconfined.
func Run(env Env, o Options, argv []string) error {
	if err := ProjectNotHome(env.Home, o.Project); err != nil {
		return err
	}
	var p sandbox.Profile
	// The person's policy: which of Pi's variables pass, and whether the
	// full boundary is required. One that cannot be read passes nothing
	// beyond the default set, and refuses a command without namespaces.
	pol, perr := policy.LoadSettings(env.Home, o.Project)
	if perr == nil && pol.Err() != nil {
		perr = pol.Err()
	}
	pass := append([]string{}, o.KeepEnv...)
	if perr == nil {
		pass = append(pass, pol.PassEnv()...)
	}
	switch o.Profile {
	case "agent":
		p = agentProfile(env, o.Project, storesPolicy(pol, perr))
		// A policy that cannot be read, or no home to read it in, takes
		// the network away too.
		p.SetNetworkOff(perr != nil || env.Home == "" || pol.Network() == policy.NetworkOff)
		if !p.NetworkOff && pol.Network() == policy.NetworkRegistries {
			g, _ := grant.Of(env.Home, realProject(o.Project), grant.Agent)
			setRegistries(&p, env.Home, "agent", append(append([]string{}, pol.AllowHosts()...), g.Net...))
		}
	case "server":
		if o.Server == "" {
			return &Error{Code: 2, Err: errors.New("--profile server needs --server NAME")}
		}
		in, g, err := serverInput(env, o.Project, o.Server, storesPolicy(pol, perr))
		if err != nil {
			return refused(fmt.Errorf("nothing was run: %w", err))
		}
		p = sandbox.Server(in, o.Server, g.Read, g.Write)
		// The server's network is the person's choice, with the hosts
		// granted to it (piagent-mcp grant NAME --net HOST). Unchosen, a
		// server keeps the host's network: an approved server usually
		// calls its own API (context7, GitHub, Figma), which the
		// registries' list cannot know; the agent's commands are the ones
		// the default narrows.
		p.SetNetworkOff(perr != nil || env.Home == "" || pol.Network() == policy.NetworkOff)
		if !p.NetworkOff && pol.Network() == policy.NetworkRegistries && pol.NetworkChosen() {
			setRegistries(&p, env.Home, "server "+o.Server, append(append([]string{}, pol.AllowHosts()...), g.Net...))
		}
		if o.EnvOnly {
			if !ContainerRuntime(argv[0], o.Project, env.Getenv("PATH")) {
				return refused(fmt.Errorf("--env-only runs only an installed container runtime, and %s is not one; nothing was run", argv[0]),
					"run it confined: drop --env-only")
			}
			environ := sandbox.FilterEnv(env.Environ, append(pass, g.Env...))
			return refused(fmt.Errorf("nothing was run: %w", sandbox.ExecUnconfined(argv, environ)))
		}
		if env.Getenv(serverChildVar) != "1" {
			// Run it as a child, and record how it ended (supervise.go).
			return superviseServer(env, o, argv, p, sandbox.ServerStateDir(in, o.Server))
		}
		pass = append(pass, g.Env...)
	default:
		return &Error{Code: 2, Err: fmt.Errorf("--profile %q: want agent or server", o.Profile)}
	}
	if o.EnvOnly && o.Profile != "server" {
		return &Error{Code: 2, Err: errors.New("--env-only is for a server's container runtime: it needs --profile server")}
	}
	environ := sandbox.FilterEnv(env.Environ, pass)
	chosen := perr == nil && pol.NetworkChosen()
	err := sandbox.ExecWith(p, argv, environ, sandbox.ExecOptions{Warn: env.Stderr, Upstream: Upstream(env.Environ, o.KeepEnv), NoProxy: func(cause string) error {
		// The default gives way where it cannot be applied, and says so;
		// a person who chose it is not given the host's network instead.
		if chosen {
			return refused(fmt.Errorf("your policy sends the network through piagent's proxy (\"network\": \"registries\"), which cannot be applied here: %s; nothing was run", cause),
				"'piagent sandbox status' says what this machine lacks; or set \"network\": \"on\" (the host's network) or \"off\" in ~/.pi/piagent-policy.json")
		}
		fmt.Fprintf(env.Stderr, "piagent: warning: the network through piagent's proxy cannot be applied here (%s); this command has the host's network, this machine's own services included\n", cause)
		return nil
	}, NoNamespace: func(cause string) error {
		// Asked only here: a person who chose the full boundary is not
		// given Landlock alone in its place.
		if perr != nil || pol.Sandbox() == policy.SandboxNamespaces {
			return refused(fmt.Errorf("no namespace can be made here (%s) and your policy requires them (\"sandbox\": \"namespaces\"), or it cannot be read; nothing was run", cause))
		}
		return nil
	}})
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) && o.Auto && p.Registries && chosen {
		return refused(fmt.Errorf("%w, and your policy sends the network through piagent's proxy (\"network\": \"registries\"), which nothing here can apply; nothing was run", err),
			"'piagent sandbox status' says what this machine lacks; or set \"network\": \"on\" in ~/.pi/piagent-policy.json")
	}
	if errors.As(err, &ue) && o.Auto && p.NetworkOff {
		return refused(fmt.Errorf("%w, and your policy takes the network away (\"network\": \"off\"), which nothing here can apply; nothing was run", err),
			"'piagent sandbox status' says what this machine lacks; or set \"network\": \"on\" in ~/.pi/piagent-policy.json")
	}
	if errors.As(err, &ue) && o.Auto {
		fmt.Fprintf(env.Stderr, "piagent: warning: %s; this command runs checked by the command reader alone\n", err)
		err = sandbox.ExecUnconfined(argv, environ)
	}
	var se *Error
	switch {
	case errors.As(err, &se):
		return err
	case errors.As(err, &ue):
		return refused(err, "nothing was run; 'piagent sandbox status' says what this machine lacks")
	}
	return refused(fmt.Errorf("nothing was run: %w", err))
}

// setRegistries sends p's network through piagent's proxy, allowing
// hosts beyond the registries; who names the caller in the refusals'
// log, in piagent's own folder.
func setRegistries(p *sandbox.Profile, home, who string, hosts []string) {
	p.Registries, p.AllowHosts, p.NetWho = true, hosts, who
	p.NetLog = NetLog(home)
}

// upstreamVars name the person's own proxy, which piagent's proxy chains to.
var upstreamVars = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"}

// Upstream are the person's proxy settings in environ, for piagent's proxy
// to chain to; not one named in keep (a server's own definition's keys,
// which the adapter set in this process's environment: a definition naming
// a proxy on this machine's loopback would otherwise have piagent's proxy
// dial a service there).
func Upstream(environ, keep []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(upstreamVars, k) && !slices.ContainsFunc(keep, func(x string) bool { return strings.EqualFold(x, k) }) {
			out = append(out, kv)
		}
	}
	return out
}

// NetLog is the file the proxy logs its refusals to, which the session
// notice and doctor read.
func NetLog(home string) string { return registry.NetworkRefusals(home) }

func realProject(project string) string {
	if r, err := filepath.EvalSymlinks(project); err == nil {
		return r
	}
	return project
}

// AgentProfile derives the agent profile for a project from the registry,
// the policy's secret stores and the folders a person granted the agent's
// commands for reading there.
func AgentProfile(env Env, project string) sandbox.Profile {
	pol, err := policy.LoadSettings(env.Home, project)
	return agentProfile(env, project, storesPolicy(pol, err))
}

// agentProfile is AgentProfile with the policy already read (Run reads it
// for the network and the environment).
func agentProfile(env Env, project string, pol *policy.Policy) sandbox.Profile {
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	g, _ := grant.Of(env.Home, project, grant.Agent)
	return sandbox.Agent(profileInput(env, project, pol), g.Read)
}

// serverInput is what server NAME's profile in project is derived from
// (sandbox.Server), and the grants a person recorded for it.
func serverInput(env Env, project, name string, pol *policy.Policy) (sandbox.Input, grant.Grant, error) {
	if r, err := filepath.EvalSymlinks(project); err == nil {
		project = r
	}
	g, err := grant.Of(env.Home, project, name)
	if err != nil {
		return sandbox.Input{}, g, err
	}
	return profileInput(env, project, pol), g, nil
}

// profileInput is what a profile of project is derived from, with the
// secret stores of pol (storesPolicy).
func profileInput(env Env, project string, pol *policy.Policy) sandbox.Input {
	getenv := paths.Getenv(env.Getenv)
	agentDir := paths.AgentDir(env.Home, project, getenv)
	cfg := paths.ConfigDirName(getenv)
	var ancestors []string
	for d := filepath.Dir(project); d != filepath.Dir(d); d = filepath.Dir(d) {
		ancestors = append(ancestors, filepath.Join(d, ".mcp.json"), filepath.Join(d, cfg, "mcp.json"))
	}
	tmp := TempDir(env)
	reg := registry.List(registry.Input{Home: env.Home, AgentDir: agentDir, Project: project, ConfigDir: cfg,
		Consulted: ancestors, Binaries: Executables(), TempDir: tmp})
	stores, partial := pol.SecretStores(env.Home)
	return sandbox.Input{Home: env.Home, AgentDir: agentDir, Project: project, ConfigDir: cfg,
		TempDir: tmp, Getenv: env.Getenv, Registry: reg, Secrets: stores, PartlyReadable: partial}
}

// storesPolicy is the policy whose secret stores the sandbox hides: the
// person's, read by LoadSettings; where it cannot be read, the base
// policy's (a file that does not parse removes none).
func storesPolicy(pol *policy.Policy, err error) *policy.Policy {
	if err != nil || pol == nil || pol.Err() != nil {
		pol, _ = policy.LoadSettings("", "")
	}
	return pol
}

// TempDir is the temporary folder the sandbox keeps its private folders
// in: the one piagent pi was started with when Pi runs under it (Pi's own
// TMPDIR is then piagent's registered folder), else TMPDIR, else /tmp.
func TempDir(env Env) string {
	if t, ok := env.LookupEnv(EnvSystemTmp); ok && env.Getenv(EnvLauncher) == "1" {
		if t != "" && filepath.IsAbs(t) {
			return filepath.Clean(t)
		}
		return "/tmp"
	}
	if t := env.Getenv("TMPDIR"); t != "" && filepath.IsAbs(t) {
		return filepath.Clean(t)
	}
	return "/tmp"
}

// ProjectNotHome refuses a project that is the home folder or holds it:
// the agent's commands may write the project, and the home holds shell
// start-up files, Pi's settings and piagent's own state.
func ProjectNotHome(home, project string) error {
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

// Executables are the running binary, absolute with links resolved, and
// piagent's other binaries beside it.
func Executables() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	out := []string{exe}
	for _, name := range Binaries {
		sib := filepath.Join(filepath.Dir(exe), name)
		if sib == exe {
			continue
		}
		if fi, err := os.Stat(sib); err == nil && fi.Mode().IsRegular() {
			out = append(out, sib)
		}
	}
	return out
}

// Lean is piagent-sandbox beside bin when it is there and no one but root
// or this person may replace it (the file and its folder): sandbox exec's small binary, which starts
// in about half the time of bin. "" when there is none.
func Lean(bin string) string {
	if bin == "" || !filepath.IsAbs(bin) {
		return ""
	}
	p := filepath.Join(filepath.Dir(bin), "piagent-sandbox")
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || !trusted(fi) {
		return ""
	}
	// nor its folder: whoever may write it may put another file in its place
	if di, err := os.Stat(filepath.Dir(p)); err != nil || !trusted(di) {
		return ""
	}
	return p
}

// Main is piagent-sandbox: `piagent-sandbox exec [flags] -- COMMAND...`, the
// same as `piagent sandbox exec`.
func Main(name string, args []string, env Env) int {
	if len(args) > 0 && args[0] == "exec" {
		if o, argv, ok := Parse(env, args[1:]); ok {
			return Report(env.Stderr, name, Run(env, o, argv))
		}
	}
	fmt.Fprintf(env.Stderr, "%s: error: usage: %s exec [--auto] [--project DIR] [--profile agent|server] [--server NAME] [--keep-env VARS] -- COMMAND [ARG...]\n", name, name)
	fmt.Fprintf(env.Stderr, "%s: hint: the project must be an existing folder; 'piagent sandbox exec --help' says more\n", name)
	return 2
}

// Report prints err as piagent does (error, then hints) and returns the
// exit status.
func Report(w io.Writer, name string, err error) int {
	if err == nil {
		return 0
	}
	code, hints := 1, []string(nil)
	var se *Error
	if errors.As(err, &se) {
		if se.Quiet {
			return se.Code
		}
		code, hints = se.Code, se.Hints
	}
	fmt.Fprintf(w, "%s: error: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
	for _, h := range hints {
		fmt.Fprintf(w, "%s: hint: %s\n", name, h)
	}
	return code
}

// ContainerRuntime reports a command whose server runs through a container
// daemon (docker, podman, nerdctl): one that resolves, on PATH's absolute
// entries, to an installed runtime — outside project and every
// node_modules, owned by root or this user, in a folder no one else may
// write. A repository's own ./tools/docker, or a link to it, is not one: it
// runs confined like any other command.
func ContainerRuntime(cmd, project, path string) bool {
	switch filepath.Base(cmd) {
	case "docker", "podman", "nerdctl":
	default:
		return false
	}
	p := cmd
	if !filepath.IsAbs(cmd) {
		if strings.ContainsRune(cmd, filepath.Separator) {
			return false // relative to the folder it starts in: the project
		}
		if p = paths.LookPathAbs(cmd, path, os.Stat); p == "" {
			return false
		}
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil || project != "" && paths.Within(project, r) || strings.Contains(r, string(filepath.Separator)+"node_modules"+string(filepath.Separator)) {
		return false
	}
	for _, f := range []string{r, filepath.Dir(r)} {
		fi, err := os.Stat(f)
		if err != nil || !trusted(fi) {
			return false
		}
	}
	return true
}
