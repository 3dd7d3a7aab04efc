package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

func (a *app) approveCommand() *cobra.Command {
	c := &cobra.Command{
		Use: "approve NAME",
		Example: `  piagent-mcp approve internal
  piagent-mcp approve internal --yes --digest sha256:…   # only what the preview showed
  piagent-mcp approve internal --tools                   # accept its changed tool descriptions`,
		Short: "Show what a repository server will run, then record your consent for this project",
		Args:  exactArgs(1, "NAME"),
	}
	var o approveFlags
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "record consent without asking")
	c.Flags().StringVar(&o.digest, "digest", "", "record consent only if what would be approved still has this approval digest (the preview prints it)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what consent would cover and record nothing")
	c.Flags().BoolVar(&o.tools, "tools", false, "accept what the server offers the model now (its tools, resources, prompts and instructions) after showing how it changed")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON: what was approved (with --yes; nothing is asked), or with --dry-run the preview and its approval digest")
	c.ValidArgsFunction = a.completeServers(func(_ string, repository bool) bool { return repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		if o.tools {
			return a.approveTools(projectFlag(c), args[0], o.yes, o.dryRun, o.json)
		}
		return a.approve(projectFlag(c), args[0], o)
	})
	return c
}

// approveFlags are approve's flags.
type approveFlags struct {
	yes, dryRun, tools, json bool
	digest                   string
}

// approve shows what consent to a server covers, then records it: with
// --yes, or when the person answers yes. With --dry-run it shows it and
// records nothing, under --json inside an ops.Preview.
func (a *app) approve(project, name string, o approveFlags) error {
	g, err := a.op().GateAt(project)
	if err != nil {
		return err
	}
	s, err := a.op().Approvable(g, name)
	if err != nil {
		return err
	}
	d := a.op().Detail(g, s, a.mcpCmd())
	if err := a.op().Renderable(g, s, d.View); err != nil {
		return err
	}
	change, changed := a.op().Changed(g, s)
	if o.dryRun && o.json {
		var text strings.Builder
		a.printerTo(&text).Approval(d, change, changed)
		return a.writeJSON(ops.Preview{Action: "approve", Server: s.Name, Project: g.Project, State: s.State,
			ApprovalDigest: s.ApprovalDigest(), DryRun: true, Preview: text.String()})
	}
	if o.json && !o.yes && !o.dryRun {
		return usagef("--json records consent only with --yes: read 'piagent-mcp get %s --json' first", s.Name)
	}
	if o.json {
		// The preview is the person's; the answer is the JSON.
		a.printerTo(io.Discard).Approval(d, change, changed)
	} else {
		a.printer().Approval(d, change, changed)
	}
	if o.dryRun {
		return nil
	}
	// What the person saw is not what is there now: consent to the
	// preview is not consent to this.
	if err := ops.SamePreview(s, o.digest); err != nil {
		return err
	}
	if err := a.askConsent(o.yes, "approved", "the definition", "approve "+s.Name+" --yes",
		fmt.Sprintf("Approve %s for %s? [y/N] ", s.Name, g.Project), fmt.Errorf("not approved: %s stays %s", s.Name, s.State)); err != nil {
		return err
	}
	dec, err := a.op().Approve(g, s)
	if err != nil {
		return err
	}
	return a.printDecision(dec, o.json)
}

// askConsent asks the person to confirm, unless yes says they did.
// Consent is a person's act: without a terminal to ask on, the person
// says so with --yes (the Pi slash command does, after its own
// confirmation). what is the decision not taken, read what the person
// reads first, retry the subcommand that says yes, and declined the
// error of a no.
func (a *app) askConsent(yes bool, what, read, retry, prompt string, declined error) error {
	if yes {
		return nil
	}
	if !a.env.Interactive {
		return refused(fmt.Errorf("not %s: no terminal to ask for confirmation on", what),
			"read "+read+" above, then run '"+a.mcpCmd()+" "+retry+"'")
	}
	ok, err := a.confirm(prompt)
	if err != nil {
		return err
	}
	if !ok {
		return cancelled(declined)
	}
	return nil
}

// printDecision says what approve or reject recorded.
func (a *app) printDecision(dec ops.Decision, asJSON bool) error {
	if asJSON {
		return a.writeJSON(dec)
	}
	a.printer().Decision(dec)
	return nil
}

func (a *app) confirm(prompt string) (bool, error) {
	fmt.Fprint(a.env.Stderr, prompt)
	line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes", nil
}

func (a *app) rejectCommand() *cobra.Command {
	c := &cobra.Command{
		Use:     "reject NAME",
		Example: `  piagent-mcp reject internal`,
		Short:   "Record that a repository server must not run in this project",
		Args:    exactArgs(1, "NAME"),
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(func(_ string, repository bool) bool { return repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		g, err := a.op().GateAt(projectFlag(c))
		if err != nil {
			return err
		}
		dec, err := a.op().Reject(g, args[0])
		if err != nil {
			return err
		}
		return a.printDecision(dec, *asJSON)
	})
	return c
}

func (a *app) resetCommand() *cobra.Command {
	c := &cobra.Command{
		Use: "reset [NAME]",
		Example: `  piagent-mcp reset internal
  piagent-mcp reset --stale`,
		Short: "Forget this project's decisions (or one server's), or with --stale those of projects that no longer exist",
		Args:  maxArgs(1, "one NAME"),
	}
	stale := c.Flags().Bool("stale", false, "drop the decisions of every project path that no longer exists")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(func(_ string, repository bool) bool { return repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		if *stale {
			if len(args) > 0 {
				return usagef("reset --stale takes no server name")
			}
			r, err := a.op().ResetStale()
			if err != nil {
				return err
			}
			return a.printReset(r, *asJSON)
		}
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		name := ""
		if len(args) == 1 {
			name = args[0]
		}
		r, err := a.op().Reset(dir, name)
		if err != nil {
			return err
		}
		return a.printReset(r, *asJSON)
	})
	return c
}

// printReset says which decisions reset forgot.
func (a *app) printReset(r ops.Reset, asJSON bool) error {
	if asJSON {
		return a.writeJSON(r)
	}
	a.printer().Reset(r)
	return nil
}
