package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

// How long setup waits for Pi: a version query, and a package command
// (an npm install fetches from the registry).
const (
	piQueryTimeout   = 30 * time.Second
	piPackageTimeout = 10 * time.Minute
)

func (a *app) setupCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "setup",
		Short: "Install the piagent extension and pi-mcp-adapter into Pi, and seed an MCP preset",
		Long: "Installs, through Pi's own `pi install`, the Pi extension that matches this\n" +
			"binary and " + ops.AdapterSource + ", with the extension listed first so it\n" +
			"loads before the adapter; seeds an MCP preset (default core) into the global\n" +
			"scope the way `piagent mcp --preset NAME --scope global --replace` does; and\n" +
			"prints what each server still needs. A second run changes nothing.\n\n" +
			"--check reports what is installed and exits 1 when anything is missing.",
		Args: cobra.NoArgs,
	}
	// no preset names here: see presetFlags
	presetName := c.Flags().String("mcp-preset", "core", "the preset to seed ('piagent mcp --list' shows them)")
	noMCP := c.Flags().Bool("no-mcp", false, "install only the extension: no adapter, no preset")
	dryRun := c.Flags().Bool("dry-run", false, "print the plan and change nothing")
	check := c.Flags().Bool("check", false, "report what is installed, in which versions; exit 1 when anything is missing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	apparmor := c.Flags().Bool("apparmor", false, "print the AppArmor profile that lets piagent make its sandbox's user namespace (Ubuntu 23.10 and later), and how to install it")
	apparmorInstall := c.Flags().Bool("install", false, "with --apparmor: install the profile now, through sudo (it asks for your password)")
	_ = c.RegisterFlagCompletionFunc("mcp-preset", completePresets)
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		if *apparmor || *apparmorInstall {
			if !*apparmor {
				return usagef("--install goes with --apparmor")
			}
			return a.setupAppArmor(*apparmorInstall)
		}
		if *check {
			if err := refuseGiven(c, "--check does not go with --%s", "mcp-preset", "no-mcp", "dry-run"); err != nil {
				return err
			}
			return a.setupCheck(*asJSON)
		}
		if *noMCP && c.Flags().Changed("mcp-preset") {
			return usagef("--no-mcp and --mcp-preset do not go together")
		}
		if err := ops.CheckPreset(*presetName); err != nil {
			return err
		}
		return a.setup(setupOptions{Preset: *presetName, NoMCP: *noMCP, DryRun: *dryRun, JSON: *asJSON})
	})
	return c
}

// command is a child process with this invocation's environment, run in
// home so that no project's settings take part.
func (a *app) command(ctx context.Context, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = a.env.Environ
	cmd.Dir = a.env.Home
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// output runs a short query and returns its stdout, or its stderr when
// stdout is empty: Pi 0.74 and older print their version on stderr.
func (a *app) output(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), piQueryTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := a.command(ctx, argv...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			l, _, _ := strings.Cut(msg, "\n")
			return "", &ops.ProgramError{Err: err, Said: l}
		}
		return "", err
	}
	if strings.TrimSpace(string(out)) == "" {
		return stderr.String(), nil
	}
	return string(out), nil
}

// runPiPackage runs one package command; Pi's own output goes to stderr, since
// stdout is setup's answer.
func (a *app) runPiPackage(pi string, act ops.PackageAction) error {
	ctx, cancel := context.WithTimeout(context.Background(), piPackageTimeout)
	defer cancel()
	cmd := a.command(ctx, pi, string(act.Op), act.Source, "--no-approve")
	cmd.Stdout, cmd.Stderr = a.env.Stderr, a.env.Stderr
	cmd.Env = ops.PackageEnviron(cmd.Env)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w", act.Command(), err)
	}
	return nil
}

// setupOptions are setup's inputs.
type setupOptions struct {
	Preset string // the MCP preset to seed
	NoMCP  bool   // the extension alone: no adapter, no preset
	DryRun bool
	JSON   bool
}

func (a *app) setup(o setupOptions) error {
	out, err := a.op().Setup(ops.SetupOptions{Preset: o.Preset, NoMCP: o.NoMCP, DryRun: o.DryRun, Run: a.runPiPackage,
		Seed: func(dryRun bool) (ops.Seeded, error) {
			return a.op().SeedPreset(o.Preset, filepath.Clean(a.env.Dir), dryRun, a.mcpCmd())
		}})
	switch {
	case err == nil:
	case out != nil && out.Stopped == ops.StopProblems && o.JSON:
		if err := a.writeJSON(out); err != nil {
			return err
		}
		return attention()
	case out != nil && out.Stopped == ops.StopPackage && !o.JSON:
		for _, done := range out.Actions {
			if done.Done {
				fmt.Fprintf(a.env.Stdout, "ran: %s\n    %s\n", done.Command, done.Why)
			}
		}
		return err
	default:
		return err
	}
	if o.DryRun {
		if o.JSON {
			return a.writeJSON(out)
		}
		a.printer().Setup(out)
		return nil
	}
	return a.reportSetup(out, o.JSON)
}

// reportSetup prints setup's answer; problems left make the exit status.
func (a *app) reportSetup(out *ops.SetupResult, asJSON bool) error {
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		a.printer().Setup(out)
	}
	if len(out.Problems) > 0 {
		if asJSON {
			return attention()
		}
		return ops.ProblemsErr(out.Problems)
	}
	return nil
}

func (a *app) setupCheck(asJSON bool) error {
	out, err := a.op().CheckSetup()
	if err != nil {
		return err
	}
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		a.printer().Check(out)
	}
	if !out.OK {
		return attention()
	}
	return nil
}

func (a *app) uninstallCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove what 'piagent setup' added to Pi",
		Long: "Removes, with `pi remove`, the piagent extension and — when setup was the one\n" +
			"that installed it — pi-mcp-adapter. MCP configuration and approval decisions\n" +
			"stay unless --purge is given, which asks first and then also deletes the\n" +
			"approval store, the preset servers setup seeded (only where they still match\n" +
			"their baseline) and ~/.pi/piagent. Servers you added yourself are never touched.",
		Args: cobra.NoArgs,
	}
	purge := c.Flags().Bool("purge", false, "also delete the approval decisions and the preset servers setup seeded (asks first)")
	yes := c.Flags().Bool("yes", false, "with --purge, do not ask (needed without a terminal)")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		if *yes && !*purge {
			return usagef("--yes goes with --purge")
		}
		return a.uninstall(uninstallOptions{Purge: *purge, Yes: *yes, JSON: *asJSON})
	})
	return c
}

// uninstallOptions are uninstall's inputs.
type uninstallOptions struct {
	Purge bool // also delete piagent's own state
	Yes   bool // no question asked
	JSON  bool
}

func (a *app) uninstall(o uninstallOptions) error {
	pl, err := a.op().PlanUninstall(o.Purge)
	if err != nil {
		return err
	}
	if o.Purge && !o.Yes {
		if err := a.confirmPurge(pl); err != nil {
			return err
		}
	}
	out, err := a.op().Uninstall(pl, a.runPiPackage)
	if err != nil {
		return err
	}
	if o.JSON {
		return a.writeJSON(out)
	}
	a.printer().Uninstall(out)
	return nil
}

// confirmPurge asks the person before --purge deletes, saying what.
func (a *app) confirmPurge(pl *ops.UninstallPlan) error {
	home := a.env.Home
	what := []string{ops.Display(home, "", pl.Store) + " (every approval decision)"}
	for _, f := range pl.Files {
		what = append(what, ops.Display(home, "", f))
	}
	if len(pl.Seeded) > 0 {
		what = append(what, fmt.Sprintf("the %s servers setup seeded into %s, where they still match their baseline (%s)",
			pl.Preset, ops.Display(home, "", pl.Global), strings.Join(pl.Seeded, ", ")))
	}
	if !a.env.Interactive {
		return usageErr(errors.New("--purge deletes approval decisions and asks first, and there is no terminal to ask on"),
			"run it in a terminal, or add --yes")
	}
	ok, err := a.confirm("piagent uninstall --purge deletes:\n  " + strings.Join(what, "\n  ") + "\nContinue? [y/N] ")
	if err != nil {
		return err
	}
	if !ok {
		return cancelled(errors.New("nothing removed"))
	}
	return nil
}
