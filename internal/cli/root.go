package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/ops/verbs"
	"github.com/piagent/piagent/internal/render"
	"github.com/spf13/cobra"
)

// app is one invocation: its Env and the name the user typed.
type app struct {
	env  Env
	name string // "piagent" or "piagent-mcp"
	ops  *ops.Ops
}

// mcpCmd is how this invocation spells the MCP commands in hints.
func (a *app) mcpCmd() string { return mcpCmdOf(a.name) }

// mcpCmdOf spells the MCP commands for the program name the person typed.
func mcpCmdOf(name string) string {
	if name == "piagent-mcp" {
		return "piagent-mcp"
	}
	return "piagent mcp"
}

// printer words results for this invocation's person, on its stdout.
func (a *app) printer() *render.Printer { return a.printerTo(a.env.Stdout) }

// printerTo is printer with its answers written to w.
func (a *app) printerTo(w io.Writer) *render.Printer {
	return &render.Printer{Out: w, Err: a.env.Stderr, Name: a.name, Cmd: a.mcpCmd(), Home: a.env.Home,
		Width: a.env.Width, Colour: a.env.Width > 0 && a.env.Getenv("NO_COLOR") == ""}
}

// op is the operations layer for this invocation's person.
func (a *app) op() *ops.Ops {
	if a.ops == nil {
		a.ops = &ops.Ops{Home: a.env.Home, Getenv: a.env.Getenv, LookupEnv: a.env.LookupEnv, Now: a.env.now, Binaries: executables(), Dir: a.env.Dir, Output: a.output,
			Waiting: func(what, holder string) {
				fmt.Fprintf(a.env.Stderr, "%s: waiting for %s: held by %s\n", a.name, what, holder)
			},
			Warn: func(err error) { fmt.Fprintf(a.env.Stderr, "%s: warning: %v\n", a.name, err) },
		}
	}
	return a.ops
}

// CommandMemory is the heap a one-shot command grows to before its first
// collection (gcpolicy.OneShot, set by the main packages); 10,000 servers
// need about 40 MiB.
const CommandMemory = 48 << 20

// Main runs one command line and returns its exit status. name is the
// program's name: "piagent" enters the whole tree, "piagent-mcp" enters it at
// `mcp`.
func Main(name string, args []string, env Env) int {
	a := &app{env: env, name: name}
	if code, ok := a.sandboxFast(args); ok {
		return code // runs before every agent command: no command tree
	}
	var root *cobra.Command
	if name == "piagent-mcp" {
		root = a.mcpCommand("piagent-mcp")
	} else {
		root = a.rootCommand()
	}
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	// after SetOut: the completion commands take their writer when made
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Long += "\n\nBash completion needs the bash-completion package (apt install bash-completion,\nbrew install bash-completion@2), loaded by your shell's start-up files."
		}
	}
	root.Version = Version
	root.SetVersionTemplate(fmt.Sprintf("%s %s (helper protocol %s/%d)\n", name, Version, ops.HelperProtocol, ops.HelperVersion))
	guardGroups(root)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr(err, fmt.Sprintf("run '%s --help' for usage", c.CommandPath()))
	})
	err := root.Execute()
	var ce *cliError
	var oe *ops.Error
	if err != nil && !errors.As(err, &ce) && !errors.As(err, &oe) {
		// Anything that is not ours comes from cobra's own parsing: usage.
		err = usageErr(err, fmt.Sprintf("run '%s --help' for usage", name))
	}
	return reportAs(env.Stderr, name, err, wantsJSON(args))
}

// wantsJSON reports whether the command line asks --json (before any --):
// its errors are JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "piagent",
		Short: "A guardrail for coding agents: MCP approval, the tool guard, and a gated Pi launcher",
		Long: "A guardrail for coding agents: MCP approval, the tool guard, and a gated Pi launcher.\n\n" +
			"Start here:\n" +
			"  piagent setup          install the Pi extension and the MCP adapter, seed the core preset\n" +
			"  piagent pi             start Pi so that only approved MCP servers can run\n" +
			"  piagent mcp list       every MCP server here, with its state\n" +
			"  piagent mcp doctor     what each server needs, and the command that fixes it\n\n" +
			"More: piagent help exit-codes, piagent help environment, docs/setup.md.",
		Args: cobra.NoArgs,
	}
	root.AddCommand(reads(a.mcpCommand("mcp"))) // --preset changes: the guard reads the flag
	root.AddCommand(a.topCommands()...)
	root.AddCommand(helpTopics()...)
	return root
}

// The command tree. Which commands there are, and whether each records or
// changes decisions or configuration ("changes": an agent may not run it)
// or only reads ("reads"), is the table in internal/ops/verbs: each
// command's "gate" annotation comes from it, the guard's shell reader
// derives its lists from it, and TestCommandTableAgreesWithGuard and
// TestTableIsTheTree keep the three in step.

// topCommands are the top-level commands beside `mcp`.
func (a *app) topCommands() []*cobra.Command {
	return fromTable(verbs.Top,
		a.piCommand(), a.launchConfigCommand(), a.setupCommand(), a.uninstallCommand(),
		a.policyCommand(), a.guardCommand(), a.sandboxCommand(), a.extensionCommand(),
		a.versionCommand(), a.manCommand(), a.quarantineCommand(),
	)
}

// mcpSubcommands are the subcommands of `mcp` (and of piagent-mcp).
func (a *app) mcpSubcommands() []*cobra.Command {
	return fromTable(verbs.MCP,
		a.listCommand(), a.getCommand(), a.doctorCommand(), a.noticeCommand(),
		a.approveCommand(), a.rejectCommand(), a.resetCommand(), a.addCommand(),
		a.editCommand("remove"), a.editCommand("enable"), a.editCommand("disable"),
		a.grantCommand(), a.presetCommand(),
	)
}

// fromTable annotates each command with its verb's effect in vs, and its
// subcommands with theirs when the table lists them (else they take the
// command's). A command the table lacks is a programming error: a new
// command enters the table first.
func fromTable(vs []verbs.Verb, cs ...*cobra.Command) []*cobra.Command {
	for _, c := range cs {
		v, ok := verbs.Of(vs, c.Name())
		if !ok {
			panic("cli: command " + c.Name() + " is not in internal/ops/verbs")
		}
		annotate(c, string(v.Effect))
		if len(v.Subs) > 0 {
			fromTable(v.Subs, c.Commands()...)
		}
	}
	return cs
}

// gateKey is the annotation that says whether an agent may run a command:
// gateChanges or gateReads. A subcommand without one takes its parent's.
const (
	gateKey     = "gate"
	gateChanges = string(verbs.Changes)
	gateReads   = string(verbs.Reads)
)

func reads(c *cobra.Command) *cobra.Command { return annotate(c, gateReads) }

func annotate(c *cobra.Command, v string) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	if _, ok := c.Annotations[gateKey]; !ok {
		c.Annotations[gateKey] = v
	}
	return c
}

func (a *app) mcpCommand(use string) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: "Manage MCP servers and their approval across every file agents read",
		Args:  cobra.NoArgs,
	}
	c.PersistentFlags().String("project", "", "the project directory (default: the working directory)")
	_ = c.MarkPersistentFlagDirname("project")
	c.AddCommand(a.mcpSubcommands()...)
	if use == "piagent-mcp" {
		c.AddCommand(helpTopics()...)
	}
	a.presetFlags(c) // `mcp` itself takes --preset and --list
	return c
}

// run adapts a command body: errors that are not already ours (or the
// operations layer's, which report words) become a refusal with status 1.
func run(fn func(c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		err := fn(c, args)
		var ce *cliError
		var oe *ops.Error
		if err != nil && !errors.As(err, &ce) && !errors.As(err, &oe) {
			return refused(err)
		}
		return err
	}
}

// guardGroups makes every command that only groups others refuse what it
// does not know: `piagent polcy`, `piagent policy shwo` and `piagent guard
// foo` exit 2 with "did you mean" rather than print help and succeed, and a
// command's NoArgs refusal is worded like ours.
func guardGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		guardGroups(sub)
	}
	if !c.HasSubCommands() {
		return
	}
	own := c.RunE
	c.Args = cobra.ArbitraryArgs
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			hints := []string{}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				// cobra lists them in command order: the nearest first
				// (lst is list, not get).
				best := s[0]
				for _, c := range s[1:] {
					if ops.EditDistance(args[0], c) < ops.EditDistance(args[0], best) {
						best = c
					}
				}
				hints = append(hints, "did you mean '"+cmd.CommandPath()+" "+best+"'?")
			}
			hints = append(hints, "run '"+cmd.CommandPath()+" --help' for its commands")
			return usageErr(fmt.Errorf("%s has no command %q", cmd.CommandPath(), args[0]), hints...)
		}
		if own != nil {
			return own(cmd, args)
		}
		return cmd.Help()
	}
}
