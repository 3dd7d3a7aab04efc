package cli

import (
	"errors"
	"fmt"
	"github.com/piagent/piagent/internal/ops"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

func (a *app) grantCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "grant (NAME | --agent) (--read DIR | --write DIR | --env VAR | --net HOST[:PORT])... [--remove]",
		Short: "Let a server reach a folder beyond its sandbox profile, for this project",
		Long: `Let a server reach a folder beyond its sandbox profile, for this project.

Every stdio server piagent pi starts runs confined: it writes only the
project and private folders of its own, and never reads your credential
stores. A server that needs more (a filesystem server pointed at ~/notes, a
server that keeps state in ~/.local/share/x) gets it by a grant you record
here, outside the repository. A repository can never grant, and an agent's
tool call cannot run this command. A folder that holds piagent's, Pi's or
the adapter's own files cannot be granted for writing.

A server receives a default set of variables (PATH, HOME, locale, proxies,
toolchains), the keys of its own approved definition's env, and the names
in your policy's passEnv; --env passes one more of Pi's variables to this
server alone (a token it needs). Nothing else of Pi's environment — its API
keys above all — reaches it.

The network (with "network": "registries", the default) goes through
piagent's proxy, which reaches the package registries alone; --net lets
this server (or, with --agent, the agent's commands in this project) reach
one more host (HOST for https and http, HOST:PORT, *.DOMAIN), or a service
of this machine's by its loopback port (127.0.0.1:5432, localhost:3000).`,
		Example: `  piagent-mcp grant notes --write ~/notes
  piagent-mcp grant indexer --read ~/datasets
  piagent-mcp grant notes --write ~/notes --remove
  piagent-mcp grant github --env GITHUB_TOKEN
  piagent-mcp grant github --net api.github.com
  piagent-mcp grant --agent --net 127.0.0.1:5432`,
	}
	agent := c.Flags().Bool("agent", false, "grant to the agent's own commands in this project (with --net) instead of a server")
	c.Args = func(c *cobra.Command, args []string) error {
		if *agent {
			return exactArgs(0, "no NAME with --agent")(c, args)
		}
		return exactArgs(1, "NAME")(c, args)
	}
	read := c.Flags().StringArray("read", nil, "a folder the server may read although its profile hides it")
	write := c.Flags().StringArray("write", nil, "a folder the server may write")
	env := c.Flags().StringArray("env", nil, "a variable of Pi's environment the server receives")
	netHosts := c.Flags().StringArray("net", nil, "a host (HOST[:PORT], *.DOMAIN) reached through piagent's proxy, or a loopback port of this machine's")
	remove := c.Flags().Bool("remove", false, "take the named folders and variables away instead")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(nil)
	c.RunE = run(func(c *cobra.Command, args []string) error {
		if len(*read) == 0 && len(*write) == 0 && len(*env) == 0 && len(*netHosts) == 0 {
			return usagef("name a folder with --read or --write, a variable with --env, or a host with --net")
		}
		for i, h := range *netHosts {
			e, err := nethosts.ParseEntry(h)
			if err != nil {
				return usagef("--net %v", err)
			}
			(*netHosts)[i] = e.String()
		}
		if *agent {
			if len(*read) > 0 || len(*write) > 0 || len(*env) > 0 {
				return usagef("--agent takes --net alone")
			}
			project, err := a.projectDir(c)
			if err != nil {
				return err
			}
			if r, err := filepath.EvalSymlinks(project); err == nil {
				project = r
			}
			got, err := grant.Add(a.env.Home, project, grant.Agent, grant.Grant{Net: *netHosts}, *remove)
			if err != nil {
				return refused(fmt.Errorf("cannot record the grant: %w", err))
			}
			if *asJSON {
				return a.writeJSON(map[string]any{"agent": true, "project": project, "grant": got})
			}
			fmt.Fprintf(a.env.Stdout, "the agent's commands in %s reach, beyond the package registries: %s\nrecorded in %s; it applies from the next command\n", project, listOr(got.Net), registry.GrantsFile(a.env.Home))
			return nil
		}
		for _, v := range *env {
			if !validEnvName(v) {
				return usagef("--env %q: want a variable name (letters, digits, _)", v)
			}
		}
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		s, err := ops.Server(g, args[0])
		if err != nil {
			return err
		}
		abs := func(list []string) []string {
			out := make([]string, 0, len(list))
			for _, p := range list {
				out = append(out, paths.Abs(a.env.Dir, paths.Expand(a.env.Home, p)))
			}
			return out
		}
		r, w := abs(*read), abs(*write)
		if !*remove {
			set := registry.NewSet(g.Registry(executables(), nil))
			for _, d := range w {
				if f, ok := set.Match(d); ok {
					return refused(fmt.Errorf("cannot grant writing %s: it is %s, which decides what runs", d, f))
				}
				if f, ok := set.Holds(d); ok {
					return refused(fmt.Errorf("cannot grant writing %s: it holds %s, which decides what runs", d, f), "grant a folder beneath it instead")
				}
			}
		}
		got, err := grant.Add(a.env.Home, g.Project, s.Name, grant.Grant{Read: r, Write: w, Env: *env, Net: *netHosts}, *remove)
		if err != nil {
			return refused(fmt.Errorf("cannot record the grant: %w", err))
		}
		a.op().RefreshLaunch(g.Project)
		if *asJSON {
			return a.writeJSON(map[string]any{"server": s.Name, "project": g.Project, "grant": got})
		}
		verb := "granted"
		if *remove {
			verb = "removed"
		}
		fmt.Fprintf(a.env.Stdout, "%s for %s in %s: read %s; write %s; variables %s; network %s\n", verb, s.Name, g.Project, listOr(got.Read), listOr(got.Write), listOr(got.Env), listOr(got.Net))
		for _, d := range append(append([]string{}, r...), w...) {
			if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) && !*remove {
				fmt.Fprintf(a.env.Stderr, "%s: warning: %s does not exist yet; the grant applies once it does\n", a.name, d)
			}
		}
		fmt.Fprintf(a.env.Stdout, "recorded in %s; it applies from the server's next start\n", registry.GrantsFile(a.env.Home))
		return nil
	})
	return c
}

// validEnvName reports a portable variable name.
func validEnvName(v string) bool {
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		return false
	}
	for _, c := range v {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func listOr(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}

// confinement says how a server runs under piagent pi: "confined",
// "not confined: …" (a container runtime, whose socket is root-equivalent),
// or "remote".
func confinement(s *gate.Server, project string) string {
	if s.Config == nil {
		return ""
	}
	cmd, _ := s.Config.Entry["command"].(string)
	switch {
	case cmd == "":
		return "remote"
	case launch.ContainerRuntime(cmd, project):
		return "not confined: " + filepath.Base(cmd) + " talks to its daemon's socket, which is root-equivalent; piagent cannot confine what the container does (it gets the server's environment allow-list alone: none of Pi's keys)"
	}
	return "confined"
}
