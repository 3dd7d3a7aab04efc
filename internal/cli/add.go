package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

func completeScopes(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return ops.WriteScopes, cobra.ShellCompDirectiveNoFileComp
}

// scopeFlag is --scope of a write verb, with its completion: the file to
// write, global by default. with starts its usage.
func scopeFlag(c *cobra.Command, with string) *string {
	s := c.Flags().String("scope", ops.DefaultScope, with+"the file to write: "+strings.Join(ops.WriteScopes, ", "))
	_ = c.RegisterFlagCompletionFunc("scope", completeScopes)
	return s
}

func (a *app) addCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "add NAME (--url URL | [--env K=V]... -- COMMAND [ARGS...])",
		Short: "Add a server to one config file, refusing secrets; a repository scope also approves it for this project",
		Example: `  piagent-mcp add sentry --url https://mcp.sentry.dev/mcp --scope global
  piagent-mcp add internal --scope project -- npx -y @acme/internal-mcp
  piagent-mcp add gh --env 'GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_PERSONAL_ACCESS_TOKEN}' -- npx -y @acme/gh-mcp`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	url := c.Flags().String("url", "", "the server's URL: https, or http on a loopback host")
	envs := c.Flags().StringArray("env", nil, "an environment variable NAME=VALUE for a command server; secrets as NAME=${NAME}")
	headers := c.Flags().StringArray("header", nil, `an HTTP header "Name: value" for a --url server; secrets as ${NAME}`)
	scope := scopeFlag(c, "")
	replace := c.Flags().Bool("replace", false, "replace a server of that name already in the file")
	dryRun := c.Flags().Bool("dry-run", false, "print the file as it would read and change nothing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	printCmd := c.Flags().Bool("print-command", false, "print the terminal command for this request instead of writing")
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// add foo npx -y foo-mcp: -y is the server's, not add's.
		if strings.Contains(err.Error(), "unknown") && c.ArgsLenAtDash() < 0 {
			return usageErr(err, "put the server's command after --: "+a.mcpCmd()+" add NAME [--scope SCOPE] -- COMMAND [ARGS...]")
		}
		return usageErr(err, fmt.Sprintf("run '%s --help' for usage", c.CommandPath()))
	})
	c.RunE = run(func(c *cobra.Command, args []string) error {
		req, err := ops.ParseAdd(args, c.ArgsLenAtDash(), *url, *envs, *headers)
		if err != nil {
			return err
		}
		project, err := a.projectDir(c)
		if err != nil {
			return err
		}
		sf, err := a.op().ScopeFile(*scope, project)
		if err != nil {
			return err
		}
		out := ops.NewWriteResult("add")
		out.Name, out.Scope, out.File, out.DryRun = req.Name, sf.Scope, sf.Path, *dryRun
		if *printCmd {
			out.Command = req.CommandLine(a.mcpCmd(), sf, project, *replace)
			if *asJSON {
				return a.writeJSON(out)
			}
			fmt.Fprintln(a.env.Stdout, out.Command)
			return nil
		}
		added, err := a.op().Add(ops.AddOptions{Request: req, Project: project, File: sf, Replace: *replace, DryRun: *dryRun})
		if err != nil {
			return err
		}
		if added.Replaced {
			out.Action = "replace"
		}
		res := added.Result
		out.File, out.Changed = res.Path, res.Changed
		return a.finishWrite(project, &out, res, []string{req.Name}, added.Pre, *asJSON)
	})
	return c
}

// finishWrite reports a write: the scope and file, the approval a repository
// scope records for what the person just wrote, notes about higher layers,
// and what the servers still need (stderr).
// pre holds the digests approveFirst recorded before the write.
func (a *app) finishWrite(project string, out *ops.WriteResult, res ops.EditResult, written []string, pre map[string]string, asJSON bool) error {
	if out.DryRun {
		out.Content = string(res.After)
		if asJSON {
			return a.writeJSON(out)
		}
		a.printer().DryWrite(out, res)
		return nil
	}
	wr, approveErr := a.op().FinishWrite(project, res, written, pre, out.Preset == "")
	out.Finished(wr, a.mcpCmd())
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		a.printer().Wrote(out, res.Changed)
	}
	return approveErr
}
