package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

func (a *app) grantCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "grant (NAME | --agent) (--read PATH | --write DIR | --env VAR | --net HOST[:PORT])... [--remove]",
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
of this machine's by its loopback port (127.0.0.1:5432, localhost:3000).

The agent's own commands never read your secret stores either (~/.ssh,
~/.aws/credentials, ~/.kube, ~/.git-credentials, ~/.config/gh and the rest
your policy's protectedPaths keep from every tool): --agent --read lets
them read one in this project (kubectl reading ~/.kube).`,
		Example: `  piagent-mcp grant notes --write ~/notes
  piagent-mcp grant indexer --read ~/datasets
  piagent-mcp grant notes --write ~/notes --remove
  piagent-mcp grant github --env GITHUB_TOKEN
  piagent-mcp grant github --net api.github.com
  piagent-mcp grant --agent --net 127.0.0.1:5432
  piagent-mcp grant --agent --read ~/.kube`,
	}
	agent := c.Flags().Bool("agent", false, "grant to the agent's own commands in this project (with --read or --net) instead of a server")
	c.Args = func(c *cobra.Command, args []string) error {
		if *agent {
			return exactArgs(0, "no NAME with --agent")(c, args)
		}
		return exactArgs(1, "NAME")(c, args)
	}
	read := c.Flags().StringArray("read", nil, "a folder (or file) the server, or with --agent the agent's commands, may read although the profile hides it")
	write := c.Flags().StringArray("write", nil, "a folder the server may write")
	env := c.Flags().StringArray("env", nil, "a variable of Pi's environment the server receives")
	netHosts := c.Flags().StringArray("net", nil, "a host (HOST[:PORT], *.DOMAIN) reached through piagent's proxy, or a loopback port of this machine's")
	remove := c.Flags().Bool("remove", false, "take the named folders and variables away instead")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(nil)
	c.RunE = run(func(c *cobra.Command, args []string) error {
		project, err := a.projectDir(c)
		if err != nil {
			return err
		}
		o := ops.GrantOptions{Project: project, Agent: *agent, Read: *read, Write: *write, Env: *env, Net: *netHosts,
			Dir: a.env.Dir, Remove: *remove}
		if !*agent {
			o.Server = args[0]
		}
		got, err := a.op().Grant(o)
		if err != nil {
			return err
		}
		if got.Agent {
			if *asJSON {
				return a.writeJSON(map[string]any{"agent": true, "project": got.Project, "grant": got.Grant})
			}
			fmt.Fprintf(a.env.Stdout, "the agent's commands in %s read, of the secret stores: %s; reach, beyond the package registries: %s\nrecorded in %s; it applies from the next command\n", got.Project, render.Names(got.Grant.Read), render.Names(got.Grant.Net), got.File)
			for _, d := range got.Missing {
				fmt.Fprintf(a.env.Stderr, "%s: warning: %s does not exist yet; the grant applies once it does\n", a.name, d)
			}
			return nil
		}
		if *asJSON {
			return a.writeJSON(map[string]any{"server": got.Server, "project": got.Project, "grant": got.Grant})
		}
		verb := "granted"
		if *remove {
			verb = "removed"
		}
		gr := got.Grant
		fmt.Fprintf(a.env.Stdout, "%s for %s in %s: read %s; write %s; variables %s; network %s\n", verb, got.Server, got.Project, render.Names(gr.Read), render.Names(gr.Write), render.Names(gr.Env), render.Names(gr.Net))
		for _, d := range got.Missing {
			fmt.Fprintf(a.env.Stderr, "%s: warning: %s does not exist yet; the grant applies once it does\n", a.name, d)
		}
		fmt.Fprintf(a.env.Stdout, "recorded in %s; it applies from the server's next start\n", got.File)
		return nil
	})
	return c
}
