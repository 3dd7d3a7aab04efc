package cli

import (
	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/render"
)

// presetFlags gives `mcp` its own --preset and --list.
func (a *app) presetFlags(c *cobra.Command) {
	// The names are not in the flag's text: reading them would parse the
	// presets file at every start of every command; --list and completion
	// read them when asked.
	name := c.Flags().String("preset", "", "apply a preset by name (--list shows them)")
	list := c.Flags().Bool("list", false, "list the presets, their servers and what each server still needs")
	scope := scopeFlag(c, "with --preset, ")
	replace := c.Flags().Bool("replace", false, "with --preset, restore the preset's servers to their pinned baselines")
	dryRun := c.Flags().Bool("dry-run", false, "with --preset, print the file as it would read and change nothing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	_ = c.RegisterFlagCompletionFunc("preset", completePresets)
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		switch {
		case *list && *name != "":
			return usagef("--list and --preset do not go together")
		case *list:
			return a.listPresets(*asJSON)
		case *name != "":
			project, err := a.projectDir(c)
			if err != nil {
				return err
			}
			return a.applyPreset(presetOptions{Name: *name, Scope: *scope, Project: project, Replace: *replace, DryRun: *dryRun, JSON: *asJSON})
		}
		if err := refuseGiven(c, "--%s goes with --preset NAME", "scope", "replace", "dry-run", "json"); err != nil {
			return err
		}
		return c.Help()
	})
}

// completePresets offers the presets' names (--preset, --mcp-preset).
func completePresets(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return ops.PresetNames(), cobra.ShellCompDirectiveNoFileComp
}

// completePresetArg offers them for preset's one argument.
func completePresetArg(c *cobra.Command, args []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completePresets(c, args, s)
}

// presetCommand is `mcp preset [NAME]`: the same as `mcp --preset NAME`
// (and, with no name, `mcp --list`), spelled the way other tools spell it.
func (a *app) presetCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "preset [NAME]",
		Short: "Apply a preset of pinned MCP servers, or list the presets",
		Long: "With a name, writes the preset's servers into one file (--scope, default global):\n" +
			"a server the file lacks is added, one already there is kept unless --replace\n" +
			"restores its pinned baseline, and no other server is touched. Without a name,\n" +
			"lists every preset, its servers and what each still needs.",
		Example:           "  piagent-mcp preset\n  piagent-mcp preset core\n  piagent-mcp preset docs --scope project --dry-run",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completePresetArg,
	}
	scope := scopeFlag(c, "")
	replace := c.Flags().Bool("replace", false, "restore the preset's servers to their pinned baselines")
	dryRun := c.Flags().Bool("dry-run", false, "print the file as it would read and change nothing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			if err := refuseGiven(c, "--%s goes with a preset name", "scope", "replace", "dry-run"); err != nil {
				return err
			}
			return a.listPresets(*asJSON)
		}
		project, err := a.projectDir(c)
		if err != nil {
			return err
		}
		return a.applyPreset(presetOptions{Name: args[0], Scope: *scope, Project: project, Replace: *replace, DryRun: *dryRun, JSON: *asJSON})
	})
	return c
}

func (a *app) listPresets(asJSON bool) error {
	all := ops.Presets()
	if asJSON {
		return a.writeJSON(map[string]any{"presets": all})
	}
	render.Presets(a.env.Stdout, all)
	return nil
}

// applyPreset writes a preset's servers into one file: a server the file
// lacks is added; one already there is kept unless replace restores the
// baseline; no other server is touched. Settings are written only where
// the file leaves them unset.
// presetOptions are the inputs of applyPreset (`mcp --preset`; setup's
// seeding is ops.SeedPreset).
type presetOptions struct {
	Name, Scope string
	Project     string // absolute
	Replace     bool   // restore the preset's servers to their pinned baselines
	DryRun      bool
	JSON        bool
}

func (a *app) applyPreset(o presetOptions) error {
	ap, err := a.op().ApplyPreset(ops.PresetOptions{Name: o.Name, Scope: o.Scope, Project: o.Project, Replace: o.Replace, DryRun: o.DryRun})
	if err != nil {
		return err
	}
	res := ap.Result
	out := ops.PresetResult(ap, o.DryRun)
	if !o.JSON {
		render.Applied(a.env.Stdout, ap, &out)
	}
	return a.finishWrite(o.Project, &out, res, ap.Written, ap.Pre, o.JSON)
}
