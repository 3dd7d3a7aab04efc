package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/preset"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/setup"
)

// How long setup waits for Pi: a version query, and a package command
// (an npm install fetches from the registry).
const (
	piQueryTimeout   = 30 * time.Second
	piPackageTimeout = 10 * time.Minute
)

type toolJSON = setup.Tool

type actionJSON struct {
	setup.Action
	Command string `json:"command"`
	Done    bool   `json:"done"`
}

// setupJSON is the --json answer of `setup` and `setup --dry-run`.
type setupJSON struct {
	Action        string           `json:"action"` // "setup"
	DryRun        bool             `json:"dryRun"`
	Changed       bool             `json:"changed"`
	Pi            *toolJSON        `json:"pi"`
	Node          *toolJSON        `json:"node"`
	Settings      string           `json:"settings"`
	Extension     string           `json:"extension"`
	ExtensionFile []string         `json:"extensionFiles"` // files written (or, dry run, to write)
	Actions       []actionJSON     `json:"actions"`
	Problems      []setup.Problem  `json:"problems"`
	AddsAdapter   bool             `json:"addsAdapter"` // the adapter was not listed; setup installs it (and uninstall may remove it)
	Preset        *writeResultJSON `json:"preset"`      // null with --no-mcp
	Needs         []needJSON       `json:"needs"`
	Record        string           `json:"record"`
	RecordChanged bool             `json:"recordChanged"`
}

// checkJSON is the --json answer of `setup --check`.
type checkJSON struct {
	Action    string          `json:"action"` // "check"
	OK        bool            `json:"ok"`
	Pi        *toolJSON       `json:"pi"`
	Node      *toolJSON       `json:"node"`
	Settings  string          `json:"settings"`
	Packages  []setup.Package `json:"packages"`
	Extension *setup.Package  `json:"extension"`
	Adapter   *setup.Package  `json:"adapter"`
	// AdapterInstalled is the version of the adapter's files on disk.
	AdapterInstalled string          `json:"adapterInstalled,omitempty"`
	Ordered          bool            `json:"ordered"`
	Piagent          *toolJSON       `json:"piagent"`
	Record           *setup.Record   `json:"record"`
	Problems         []setup.Problem `json:"problems"`
}

// uninstallJSON is the --json answer of `uninstall`.
type uninstallJSON struct {
	Action  string       `json:"action"` // "uninstall"
	Purge   bool         `json:"purge"`
	Actions []actionJSON `json:"actions"`
	Removed []string     `json:"removed"` // files and folders deleted
	Kept    []string     `json:"kept"`    // what stays, and why
	Changed bool         `json:"changed"`
}

func (a *app) setupCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "setup",
		Short: "Install the piagent extension and pi-mcp-adapter into Pi, and seed an MCP preset",
		Long: "Installs, through Pi's own `pi install`, the Pi extension that matches this\n" +
			"binary and " + setup.AdapterSource + ", with the extension listed first so it\n" +
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
	_ = c.RegisterFlagCompletionFunc("mcp-preset", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return preset.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		if *apparmor || *apparmorInstall {
			if !*apparmor {
				return usagef("--install goes with --apparmor")
			}
			return a.setupAppArmor(*apparmorInstall)
		}
		if *check {
			for _, f := range []string{"mcp-preset", "no-mcp", "dry-run"} {
				if c.Flags().Changed(f) {
					return usagef("--check does not go with --%s", f)
				}
			}
			return a.setupCheck(*asJSON)
		}
		if *noMCP && c.Flags().Changed("mcp-preset") {
			return usagef("--no-mcp and --mcp-preset do not go together")
		}
		if _, ok := preset.Get(*presetName); !ok {
			return usageErr(fmt.Errorf("no preset named %q", *presetName), "presets: "+strings.Join(preset.Names(), ", "))
		}
		return a.setup(setupOptions{Preset: *presetName, NoMCP: *noMCP, DryRun: *dryRun, JSON: *asJSON})
	})
	return c
}

// probe is what setup, --check and uninstall learn about the machine.
type probe struct {
	where    setup.Where
	settings string // <agentDir>/settings.json
	pi       *toolJSON
	node     *toolJSON
	problems []setup.Problem // Pi or Node missing or too old
	pkgs     []setup.Package
}

func (a *app) probe() (*probe, error) {
	if a.env.Home == "" {
		return nil, refused(errors.New("no home directory: cannot find Pi's settings"), "set HOME")
	}
	home := a.env.Home
	agentDir := paths.AgentDir(home, a.env.Dir, a.env.Getenv)
	p := &probe{
		where:    setup.Where{AgentDir: agentDir, Home: home, ExtensionRoot: filepath.Dir(extensionDir(home))},
		settings: filepath.Join(agentDir, "settings.json"),
	}
	p.findPi(a)
	data, err := safefile.Read(p.settings, safefile.Options{})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, refused(fmt.Errorf("%s: %w", p.settings, unwrapPathErr(err)))
	}
	if err != nil {
		data = nil
	}
	entries, err := setup.ParsePackages(data)
	if err != nil {
		return nil, refused(fmt.Errorf("%s: %w", p.settings, err),
			"fix the file by hand (it is Pi's); piagent never rewrites Pi's settings")
	}
	p.pkgs = setup.Classify(entries, p.where, setup.ReadManifest)
	return p, nil
}

// findPi locates Pi and the Node that will run it, and checks both versions.
func (p *probe) findPi(a *app) {
	// The launcher's own search: PIAGENT_PI, else pi on PATH.
	path, via, err := a.findPi()
	if err != nil {
		prob := setup.Problem{Code: "pi-missing", Reason: err.Error(),
			Fix: "install Pi (" + pihost.Install() + "), or set PIAGENT_PI to its executable"}
		var oe *ops.Error
		if errors.As(err, &oe) && len(oe.Hints) > 0 {
			var hints []string
			for _, h := range oe.Hints {
				hints = append(hints, a.fix(h))
			}
			prob.Fix = strings.Join(hints, "; ")
		}
		p.problems = append(p.problems, prob)
		return
	}
	pi, node, probs := setup.ProbePi(a.machine(), toolJSON{Path: path, Via: via})
	p.pi, p.node = &pi, node
	p.problems = append(p.problems, probs...)
}

// machine is what setup's probing may ask of this machine.
func (a *app) machine() setup.Machine { return setup.RealMachine(a.output, a.lookPath) }

// resolveProgram is a program named by a variable: a path (relative to the
// working directory) or a name looked up on PATH; "" when not executable.
func (a *app) resolveProgram(v string) string {
	v = paths.Expand(a.env.Home, v)
	if !strings.ContainsRune(v, os.PathSeparator) {
		return a.lookPath(v)
	}
	v = paths.Abs(a.env.Dir, v)
	if isExecutable(v) {
		return v
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
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
			return "", fmt.Errorf("%w: %s", err, l)
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
func (a *app) runPiPackage(pi string, act setup.Action) error {
	ctx, cancel := context.WithTimeout(context.Background(), piPackageTimeout)
	defer cancel()
	cmd := a.command(ctx, pi, string(act.Op), act.Source, "--no-approve")
	cmd.Stdout, cmd.Stderr = a.env.Stderr, a.env.Stderr
	if _, set := a.env.LookupEnv("npm_config_update_notifier"); !set {
		// npm's "new major version" box is not setup's to show.
		cmd.Env = append(cmd.Env, "npm_config_update_notifier=false")
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w", act.Command(), err)
	}
	return nil
}

// seedPreset applies a preset to the global scope exactly as
// `piagent mcp --preset NAME --scope global --replace` does, through the
// same code, and returns its JSON answer instead of printing it.
func (a *app) seedPreset(name string, dryRun bool) (*writeResultJSON, error) {
	var buf bytes.Buffer
	sub := *a
	sub.env.Stdout = &buf
	err := sub.applyPreset(presetOptions{Name: name, Scope: mcpconfig.ScopeGlobal, Project: filepath.Clean(a.env.Dir), Replace: true, DryRun: dryRun, JSON: true, Runnable: true})
	var out writeResultJSON
	if buf.Len() > 0 {
		if jerr := json.Unmarshal(buf.Bytes(), &out); jerr != nil && err == nil {
			err = jerr
		}
	}
	return &out, err
}

// setupOptions are setup's inputs.
type setupOptions struct {
	Preset string // the MCP preset to seed
	NoMCP  bool   // the extension alone: no adapter, no preset
	DryRun bool
	JSON   bool
}

func (a *app) setup(o setupOptions) error {
	presetName, noMCP, dryRun, asJSON := o.Preset, o.NoMCP, o.DryRun, o.JSON
	p, err := a.probe()
	if err != nil {
		return err
	}
	home := a.env.Home
	extDir := extensionDir(home)
	want := setup.Want{Extension: extDir, Adapter: !noMCP}
	plan := setup.MakePlan(p.pkgs, want)
	out := setupJSON{
		Action: "setup", DryRun: dryRun, Pi: p.pi, Node: p.node, Settings: p.settings, Extension: extDir,
		ExtensionFile: ops.ExtensionFilesToWrite(extDir), Actions: []actionJSON{}, Problems: plan.Problems,
		Needs: []needJSON{}, Record: registry.SetupRecord(home), AddsAdapter: plan.AddsAdapter,
	}
	for _, act := range plan.Actions {
		out.Actions = append(out.Actions, actionJSON{Action: act, Command: act.Command()})
	}
	if out.ExtensionFile == nil {
		out.ExtensionFile = []string{}
	}
	// Refuse before changing anything.
	pre := p.problems
	for _, act := range plan.Actions {
		if _, _, ok := setup.ParseNPM(act.Source); ok {
			pre = append(pre, setup.NPMProblems(a.machine(), p.where.AgentDir, paths.AgentDirVar(a.env.Getenv))...)
			break
		}
	}
	if len(pre) > 0 {
		out.Problems = append(pre, out.Problems...)
		return a.refuseProblems(out, asJSON, pre)
	}

	rec, _, err := setup.ReadRecord(out.Record)
	if err != nil {
		return refused(err, "remove the file; setup writes it again (it only tells uninstall whether setup installed the adapter)")
	}
	next := rec
	next.Extension = extDir
	next.NoMCP = noMCP
	if !noMCP {
		next.Preset = presetName
	}
	if plan.AddsAdapter {
		next.AdapterInstalled = true
	}

	if dryRun {
		if !noMCP {
			res, err := a.seedPreset(presetName, true)
			if err != nil {
				return err
			}
			out.Preset = res
			out.Needs = res.Needs
		}
		old, _ := safefile.Read(out.Record, safefile.Options{})
		out.RecordChanged = !bytes.Equal(old, next.Encode())
		out.Changed = len(out.Actions) > 0 || len(out.ExtensionFile) > 0 || out.RecordChanged || (out.Preset != nil && out.Preset.Changed)
		if asJSON {
			return a.writeJSON(out)
		}
		a.printSetup(&out)
		return nil
	}

	if err := a.runSetupPlan(p, plan, &out, rec, next, asJSON); err != nil {
		return err
	}
	// Pi's list is the source of truth: read it again and check the result.
	after, err := a.probe()
	if err != nil {
		return err
	}
	st := setup.Inspect(after.pkgs, extDir)
	for _, prob := range st.Problems(want) {
		if !hasProblem(plan.Problems, prob.Code) {
			return refused(fmt.Errorf("after the Pi commands, %s: %s", p.settings, prob.Reason), prob.Fix)
		}
	}
	if !noMCP {
		res, err := a.seedPreset(presetName, false)
		if res != nil {
			out.Preset = res
			out.Needs = res.Needs
		}
		if err != nil {
			return err
		}
	}
	out.RecordChanged, err = setup.WriteRecord(out.Record, next)
	if err != nil {
		return refused(fmt.Errorf("cannot write %s: %w", out.Record, err))
	}
	out.Changed = len(out.Actions) > 0 || len(out.ExtensionFile) > 0 || out.RecordChanged || (out.Preset != nil && out.Preset.Changed)
	// What --check would flag, plain setup says too: a setup that leaves
	// the extension without its piagent is not done.
	_, probs := a.piagentForExtension()
	out.Problems = append(out.Problems, probs...)
	return a.reportSetup(&out, asJSON)
}

// runSetupPlan writes the extension's files and runs Pi's package commands
// in order. When one fails, the record keeps what did happen (so uninstall
// still knows) and the error says what is left.
func (a *app) runSetupPlan(p *probe, plan setup.Plan, out *setupJSON, rec, next setup.Record, asJSON bool) error {
	written, err := ops.WriteExtension(ops.Extension(), out.Extension)
	if err != nil {
		return refused(fmt.Errorf("cannot write the Pi extension: %w", err))
	}
	out.ExtensionFile = written
	if out.ExtensionFile == nil {
		out.ExtensionFile = []string{}
	}
	for i, act := range plan.Actions {
		if err := a.runPiPackage(p.pi.Path, act); err != nil {
			next.AdapterInstalled = rec.AdapterInstalled || (plan.AddsAdapter && adapterDone(out.Actions[:i]))
			_, _ = setup.WriteRecord(out.Record, next)
			if !asJSON {
				for _, done := range out.Actions[:i] {
					fmt.Fprintf(a.env.Stdout, "ran: %s\n    %s\n", done.Command, done.Why)
				}
			}
			var left []string
			for _, rest := range plan.Actions[i:] {
				left = append(left, rest.Command())
			}
			return refused(err, "Pi's output is above; once it is fixed, run 'piagent setup' again (it picks up where it stopped)",
				"left to do: "+strings.Join(left, "; "))
		}
		out.Actions[i].Done = true
	}
	return nil
}

// reportSetup prints setup's answer; problems left make the exit status.
func (a *app) reportSetup(out *setupJSON, asJSON bool) error {
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		a.printSetup(out)
	}
	if len(out.Problems) > 0 {
		if asJSON {
			return attention()
		}
		return problemsErr(out.Problems)
	}
	return nil
}

func adapterDone(acts []actionJSON) bool {
	for _, a := range acts {
		if a.Target == setup.KindAdapter && a.Op == setup.OpInstall && a.Done {
			return true
		}
	}
	return false
}

func hasProblem(ps []setup.Problem, code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}

// problemsErr is an exit-1 error naming the first problem, with every fix.
func problemsErr(ps []setup.Problem) error {
	var reasons, hints []string
	for _, p := range ps {
		reasons = append(reasons, p.Reason)
		if !slices.Contains(hints, p.Fix) {
			hints = append(hints, p.Fix)
		}
	}
	return refused(errors.New(strings.Join(reasons, "; ")), hints...)
}

func (a *app) refuseProblems(out setupJSON, asJSON bool, ps []setup.Problem) error {
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
		return attention()
	}
	return problemsErr(ps)
}

func (a *app) printSetup(out *setupJSON) {
	w := a.env.Stdout
	home := a.env.Home
	if out.Pi != nil {
		fmt.Fprintf(w, "pi         %s (%s)\n", out.Pi.Version, ops.Display(home, "", out.Pi.Path))
	}
	if out.Node != nil {
		fmt.Fprintf(w, "node       %s (%s)\n", out.Node.Version, ops.Display(home, "", out.Node.Path))
	}
	would := ""
	if out.DryRun {
		would = "would "
	}
	if len(out.ExtensionFile) > 0 {
		fmt.Fprintf(w, "extension  %swrite %s (%d files)\n", would, ops.Display(home, "", out.Extension), len(out.ExtensionFile))
	}
	for _, act := range out.Actions {
		verb := "ran"
		if out.DryRun {
			verb = "would run"
		}
		fmt.Fprintf(w, "%s: %s\n    %s\n", verb, act.Command, act.Why)
	}
	if len(out.Actions) == 0 {
		fmt.Fprintln(w, "packages   nothing to install: Pi's packages already hold what setup installs")
	}
	if pr := out.Preset; pr != nil {
		fmt.Fprintf(w, "preset %s (scope %s, %s)\n", pr.Preset, pr.Scope, ops.Display(home, "", pr.File))
		skipped := false
		for _, s := range pr.Servers {
			fmt.Fprintf(w, "  %-16s %s\n", s.ID, presetServerText(s))
			skipped = skipped || s.Action == "skipped"
		}
		if skipped {
			fmt.Fprintf(w, "  (once it is there: piagent mcp preset %s)\n", pr.Preset)
		}
	}
	printNeeds(a.env.Stderr, out.Needs)
	switch {
	case out.DryRun:
		for _, p := range out.Problems {
			fmt.Fprintf(w, "problem: %s\n  fix: %s\n", p.Reason, p.Fix)
		}
		fmt.Fprintln(w, "dry run: nothing changed")
	case !out.Changed:
		fmt.Fprintln(w, "no change")
	case len(out.Problems) == 0:
		fmt.Fprintln(w, "start Pi with: piagent pi")
	}
}

func (a *app) setupCheck(asJSON bool) error {
	p, err := a.probe()
	if err != nil {
		return err
	}
	home := a.env.Home
	extDir := extensionDir(home)
	out := checkJSON{Action: "check", Pi: p.pi, Node: p.node, Settings: p.settings, Packages: p.pkgs, Problems: append([]setup.Problem{}, p.problems...)}
	if out.Packages == nil {
		out.Packages = []setup.Package{}
	}
	rec, found, err := setup.ReadRecord(registry.SetupRecord(home))
	if err != nil {
		out.Problems = append(out.Problems, setup.Problem{Code: "record", Reason: err.Error(), Fix: "remove the file and run 'piagent setup'"})
	} else if found {
		out.Record = &rec
	}
	want := setup.Want{Extension: extDir, Adapter: !(found && rec.NoMCP)}
	st := setup.Inspect(p.pkgs, extDir)
	out.Extension, out.Adapter, out.Ordered = st.Extension, st.Adapter, st.Ordered()
	out.Problems = append(out.Problems, st.Problems(want)...)
	if st.Extension != nil {
		if files := ops.ExtensionFilesToWrite(extDir); len(files) > 0 {
			out.Problems = append(out.Problems, setup.Problem{Code: "extension-files",
				Reason: fmt.Sprintf("the extension's files in %s are missing or differ from this binary's", extDir),
				Fix:    "run 'piagent setup' (or: piagent extension path)"})
		}
	}
	if st.Adapter != nil {
		m, ok := setup.ReadManifest(filepath.Join(p.where.AgentDir, "npm", "node_modules", setup.AdapterName))
		if ok {
			out.AdapterInstalled = m.Version
		} else {
			out.Problems = append(out.Problems, setup.Problem{Code: "adapter-files",
				Reason: fmt.Sprintf("%s is listed, but its files are not in %s", st.Adapter.Source, filepath.Join(p.where.AgentDir, "npm")),
				Fix:    "pi install " + st.Adapter.Source})
		}
	}
	var probs []setup.Problem
	out.Piagent, probs = a.piagentForExtension()
	out.Problems = append(out.Problems, probs...)
	out.OK = len(out.Problems) == 0
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		a.printCheck(&out, want)
	}
	if !out.OK {
		return attention()
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) printCheck(out *checkJSON, want setup.Want) {
	w := a.env.Stdout
	home := a.env.Home
	row := func(name, version, where string) {
		fmt.Fprintf(w, "%-10s %-8s %s\n", name, orDash(version), where)
	}
	if out.Pi != nil {
		row("pi", out.Pi.Version, ops.Display(home, "", out.Pi.Path))
	} else {
		row("pi", "", "missing")
	}
	if out.Node != nil {
		row("node", out.Node.Version, ops.Display(home, "", out.Node.Path))
	}
	if e := out.Extension; e != nil {
		row("extension", e.Version, fmt.Sprintf("%s (packages[%d])", ops.Display(home, "", e.Path), e.Index))
	} else {
		row("extension", "", "missing")
	}
	if ad := out.Adapter; ad != nil {
		row("adapter", out.AdapterInstalled, fmt.Sprintf("%s (packages[%d])", ad.Source, ad.Index))
	} else if want.Adapter {
		row("adapter", "", "missing")
	} else {
		row("adapter", "", "not wanted (setup --no-mcp)")
	}
	if pb := out.Piagent; pb != nil {
		row("piagent", pb.Version, ops.Display(home, "", pb.Path)+" ("+pb.Via+")")
	} else {
		row("piagent", "", "missing")
	}
	switch {
	case out.Extension != nil && out.Adapter != nil && out.Ordered:
		fmt.Fprintln(w, "order      the piagent extension loads before the adapter")
	case out.Extension != nil && out.Adapter != nil:
		fmt.Fprintln(w, "order      the adapter loads before the piagent extension")
	}
	fmt.Fprintf(w, "settings   %s\n", ops.Display(home, "", out.Settings))
	for _, p := range out.Problems {
		fmt.Fprintf(w, "problem: %s\n  fix: %s\n", p.Reason, p.Fix)
	}
	if out.OK {
		fmt.Fprintln(w, "ok")
	}
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

// purgeable is what uninstall --purge deletes: every registry entry of
// piagent's own under ~/.pi (the approval store, the mode store, grants,
// catalogue pins, their locks, piagent's folder and its edit locks), the
// approval store first; the user's policy, which the person writes, stays.
func purgeable(home string) []string {
	dotpi := filepath.Join(home, ".pi")
	out := []string{registry.ApprovalStore(home)}
	for _, e := range registry.List(registry.Input{Home: home}) {
		if e.Owner == registry.Piagent && paths.Within(dotpi, e.Path) && e.Path != dotpi &&
			e.Path != registry.UserPolicy(home) && !slices.Contains(out, e.Path) {
			out = append(out, e.Path)
		}
	}
	return out
}

func (a *app) uninstall(o uninstallOptions) error {
	purge, yes, asJSON := o.Purge, o.Yes, o.JSON
	p, err := a.probe()
	if err != nil {
		return err
	}
	home := a.env.Home
	recPath := registry.SetupRecord(home)
	rec, _, err := setup.ReadRecord(recPath)
	if err != nil {
		return refused(err, "remove the file by hand; without it uninstall leaves the adapter in place")
	}
	out := uninstallJSON{Action: "uninstall", Purge: purge, Actions: []actionJSON{}, Removed: []string{}, Kept: []string{}}
	for _, pkg := range p.pkgs {
		switch {
		case pkg.Kind == setup.KindExtension && paths.Within(p.where.ExtensionRoot, pkg.Path):
			act := setup.Action{Op: setup.OpRemove, Source: pkg.Path, Target: setup.KindExtension, Why: "the piagent extension setup installed"}
			out.Actions = append(out.Actions, actionJSON{Action: act, Command: act.Command()})
		case pkg.Kind == setup.KindAdapter && rec.AdapterInstalled:
			act := setup.Action{Op: setup.OpRemove, Source: pkg.Source, Target: setup.KindAdapter, Why: "setup installed it"}
			out.Actions = append(out.Actions, actionJSON{Action: act, Command: act.Command()})
		case pkg.Kind == setup.KindAdapter:
			out.Kept = append(out.Kept, pkg.Source+": setup did not install it")
		}
	}
	if len(out.Actions) > 0 && p.pi == nil {
		return problemsErr(p.problems)
	}
	var seeded []string
	if purge {
		if rec.Preset != "" {
			if pr, ok := preset.Get(rec.Preset); ok {
				seeded = pr.Servers
			}
		}
		what := []string{ops.Display(home, "", registry.ApprovalStore(home)) + " (every approval decision)"}
		for _, f := range purgeable(home)[1:] {
			if _, err := os.Lstat(f); err == nil {
				what = append(what, ops.Display(home, "", f))
			}
		}
		if len(seeded) > 0 {
			what = append(what, fmt.Sprintf("the %s servers setup seeded into %s, where they still match their baseline (%s)",
				rec.Preset, ops.Display(home, "", filepath.Join(home, ".config", "mcp", "mcp.json")), strings.Join(seeded, ", ")))
		}
		if !yes {
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
		}
	}
	for i, act := range out.Actions {
		if err := a.runPiPackage(p.pi.Path, act.Action); err != nil {
			return refused(err, "Pi's output is above; run 'piagent uninstall' again once it is fixed")
		}
		out.Actions[i].Done = true
	}
	// What setup wrote besides Pi's list: the extension copies and the record.
	removeAll := func(path string) error {
		if _, err := os.Lstat(path); err != nil {
			return nil
		}
		if err := os.RemoveAll(path); err != nil {
			return refused(fmt.Errorf("cannot remove %s: %w", path, unwrapPathErr(err)))
		}
		out.Removed = append(out.Removed, path)
		return nil
	}
	if err := removeAll(p.where.ExtensionRoot); err != nil {
		return err
	}
	if err := removeAll(recPath); err != nil {
		return err
	}
	store := registry.ApprovalStore(home)
	global := filepath.Join(home, ".config", "mcp", "mcp.json")
	if !purge {
		out.Kept = append(out.Kept, ops.Display(home, "", global)+": MCP configuration (--purge removes the preset's servers)",
			ops.Display(home, "", store)+": approval decisions (--purge removes them)")
	} else {
		if len(seeded) > 0 {
			if err := a.purgeSeeded(global, seeded, &out); err != nil {
				return err
			}
		}
		for _, f := range purgeable(home) {
			if err := removeAll(f); err != nil {
				return err
			}
		}
		if _, err := os.Lstat(registry.UserPolicy(home)); err == nil {
			out.Kept = append(out.Kept, ops.Display(home, "", registry.UserPolicy(home))+": your tool policy, written by you")
		}
	}
	out.Changed = len(out.Actions) > 0 || len(out.Removed) > 0
	if asJSON {
		return a.writeJSON(out)
	}
	w := a.env.Stdout
	for _, act := range out.Actions {
		fmt.Fprintf(w, "ran: %s\n", act.Command)
	}
	for _, r := range out.Removed {
		fmt.Fprintf(w, "removed %s\n", ops.Display(home, "", r))
	}
	for _, k := range out.Kept {
		fmt.Fprintf(w, "kept %s\n", k)
	}
	if !out.Changed {
		fmt.Fprintln(w, "no change")
	}
	return nil
}

// purgeSeeded removes from the global file the preset servers that still
// match their baseline; a server the person changed, and every other
// server, stays.
func (a *app) purgeSeeded(global string, seeded []string, out *uninstallJSON) error {
	home := a.env.Home
	if _, err := os.Lstat(global); err != nil {
		return nil
	}
	var removed []string
	o := mcpedit.Options{Mode: 0o600, DirMode: 0o700, LockPath: filepath.Join(registry.LocksDir(home), ops.LockName(global)), Waiting: a.waitingFor(global)}
	res, err := mcpedit.Update(global, o, func(d *mcpedit.Doc) error {
		removed = nil
		for _, id := range seeded {
			b, _ := preset.Baseline(id)
			if cur, ok := d.Entry(id); ok && reflect.DeepEqual(cur, b.Entry) {
				d.RemoveServer(id)
				removed = append(removed, id)
			}
		}
		return nil
	})
	if err != nil {
		return refused(fmt.Errorf("%s: %w", global, err), "the servers stay; remove them with 'piagent mcp remove NAME --scope global'")
	}
	if res.Changed {
		for _, id := range removed {
			out.Removed = append(out.Removed, global+": "+id)
		}
	}
	for _, id := range seeded {
		if !slices.Contains(removed, id) {
			out.Kept = append(out.Kept, ops.Display(home, "", global)+": "+id+" (absent, or no longer the baseline)")
		}
	}
	return nil
}

// piagentForExtension finds the piagent the extension will run
// (PIAGENT_BIN, else piagent on PATH) and what is wrong with it: setup and
// setup --check report the same problems.
func (a *app) piagentForExtension() (tool *toolJSON, probs []setup.Problem) {
	if v := strings.TrimSpace(a.env.Getenv("PIAGENT_BIN")); v != "" {
		if bin := a.resolveProgram(v); bin != "" {
			tool = &toolJSON{Path: bin, Via: "PIAGENT_BIN"}
		} else {
			probs = append(probs, setup.Problem{Code: "piagent-missing",
				Reason: fmt.Sprintf("PIAGENT_BIN names %s, which is not an executable; the extension blocks every tool call without it", v),
				Fix:    "point PIAGENT_BIN at the piagent binary, or unset it to use piagent on PATH"})
		}
	} else if bin := a.lookPath("piagent"); bin != "" {
		tool = &toolJSON{Path: bin, Via: "PATH"}
	} else {
		probs = append(probs, piagentNotOnPath())
	}
	return tool, append(probs, setup.PiagentProblem(a.machine(), tool, Version)...)
}

// piagentNotOnPath names the folder this piagent runs from (where go install
// put it) and the line that puts it on PATH.
func piagentNotOnPath() setup.Problem {
	dir := "$(go env GOPATH)/bin"
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
	}
	return setup.Problem{Code: "piagent-missing",
		Reason: fmt.Sprintf("piagent is not on PATH (this one runs from %s, where go install put it); the extension runs it and blocks every tool call without it", dir),
		Fix:    fmt.Sprintf("export PATH=\"%s:$PATH\" now, and add that line to ~/.profile (or ~/.bashrc, ~/.zshrc) for later shells; or set PIAGENT_BIN", dir)}
}

// lookPath finds name on this invocation's PATH (not the process's own),
// through its absolute entries alone (paths.LookPathAbs).
func (a *app) lookPath(name string) string {
	return paths.LookPathAbs(name, a.env.Getenv("PATH"), os.Stat)
}
