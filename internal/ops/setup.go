package ops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/setup"
)

// Setup's vocabulary (package setup), for the edge to word.
type (
	// SetupTool is a program setup looked for: where, found how, which version.
	SetupTool = setup.Tool
	// SetupProblem is something setup will not do for the person, with its fix.
	SetupProblem = setup.Problem
	// SetupPackage is one entry of Pi's package list.
	SetupPackage = setup.Package
	// SetupRecord is what setup installed (~/.pi/piagent/setup.json).
	SetupRecord = setup.Record
	// PackageAction is one of Pi's package commands (pi install, pi remove).
	PackageAction = setup.Action
)

// AdapterSource is the MCP adapter setup installs.
const AdapterSource = setup.AdapterSource

// RunPackage runs one of Pi's package commands with the Pi at pi; what Pi
// prints is the edge's to show.
type RunPackage func(pi string, act PackageAction) error

// PackageEnviron is the environment a package command of Pi's runs with:
// environ, with npm's update notifier off unless the person set it (npm's
// "new major version" box is not setup's to show).
func PackageEnviron(environ []string) []string {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "npm_config_update_notifier=") {
			return environ
		}
	}
	return append(environ[:len(environ):len(environ)], "npm_config_update_notifier=false")
}

// SetupAction is one of Pi's package commands setup or uninstall plans,
// worded, and whether it ran.
type SetupAction struct {
	setup.Action
	Command string `json:"command"`
	Done    bool   `json:"done"`
}

func actionOf(act setup.Action) SetupAction {
	return SetupAction{Action: act, Command: act.Command()}
}

// SetupStop says why setup ended before its end.
type SetupStop int

const (
	// StopProblems: Pi, Node or npm are not fit; nothing changed.
	StopProblems SetupStop = iota + 1
	// StopPackage: one of Pi's package commands failed; the ones before it
	// ran (Done).
	StopPackage
)

// SetupResult is setup's answer (its --json).
type SetupResult struct {
	Action        string         `json:"action"` // "setup"
	DryRun        bool           `json:"dryRun"`
	Changed       bool           `json:"changed"`
	Pi            *SetupTool     `json:"pi"`
	Node          *SetupTool     `json:"node"`
	Settings      string         `json:"settings"`
	Extension     string         `json:"extension"`
	ExtensionFile []string       `json:"extensionFiles"` // files written (or, dry run, to write)
	Actions       []SetupAction  `json:"actions"`
	Problems      []SetupProblem `json:"problems"`
	AddsAdapter   bool           `json:"addsAdapter"` // the adapter was not listed; setup installs it (and uninstall may remove it)
	Preset        *WriteResult   `json:"preset"`      // the seeding's answer (SetupOptions.Seed); null with NoMCP
	Needs         []Need         `json:"needs"`
	Record        string         `json:"record"`
	RecordChanged bool           `json:"recordChanged"`
	Stopped       SetupStop      `json:"-"` // 0 when setup ran to its end
	presetChanged bool           // the seeding changed the global file
}

// Seeded is what seeding a preset answered.
type Seeded struct {
	Answer  *WriteResult // the apply's answer (SetupResult.Preset)
	Changed bool         // the global file changed (or, dry run, would)
	Needs   []Need       // what the seeded servers still need
}

// SetupOptions are setup's inputs.
type SetupOptions struct {
	Preset string // the MCP preset to seed
	NoMCP  bool   // the extension alone: no adapter, no preset
	DryRun bool
	// Seed applies the preset to the global scope, the way
	// `piagent mcp --preset NAME --scope global --replace` does with only
	// the servers this machine can run: Ops.SeedPreset.
	Seed func(dryRun bool) (Seeded, error)
	Run  RunPackage
}

// probe is what setup, --check and uninstall learn about the machine.
type probe struct {
	where    setup.Where
	settings string // <agentDir>/settings.json
	pi       *SetupTool
	node     *SetupTool
	problems []setup.Problem // Pi or Node missing or too old
	pkgs     []setup.Package
}

func (o *Ops) probe() (*probe, error) {
	if o.Home == "" {
		return nil, refused(errors.New("no home directory: cannot find Pi's settings"), text("set HOME"))
	}
	agentDir := paths.AgentDir(o.Home, o.Dir, o.getenv)
	p := &probe{
		where:    setup.Where{AgentDir: agentDir, Home: o.Home, ExtensionRoot: filepath.Dir(ExtensionDir(o.Home))},
		settings: filepath.Join(agentDir, "settings.json"),
	}
	p.findPi(o)
	data, err := safefile.Read(p.settings, safefile.Options{})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, refused(fmt.Errorf("%s: %w", p.settings, pathCause(err)))
	}
	if err != nil {
		data = nil
	}
	entries, err := setup.ParsePackages(data)
	if err != nil {
		return nil, refused(fmt.Errorf("%s: %w", p.settings, err),
			text("fix the file by hand (it is Pi's); piagent never rewrites Pi's settings"))
	}
	p.pkgs = setup.Classify(entries, p.where, setup.ReadManifest)
	return p, nil
}

// pathCause is the cause of a *fs.PathError, else err: the path is said
// once, by the caller.
func pathCause(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// findPi locates Pi and the Node that will run it, and checks both versions.
func (p *probe) findPi(o *Ops) {
	// The launcher's own search: PIAGENT_PI, else pi on PATH.
	path, via, err := o.FindPi()
	if err != nil {
		prob := setup.Problem{Code: "pi-missing", Reason: err.Error(),
			Fix: "install Pi (" + pihost.Install() + "), or set PIAGENT_PI to its executable"}
		var oe *Error
		if errors.As(err, &oe) && len(oe.Hints) > 0 {
			var hints []string
			for _, h := range oe.Hints {
				hints = append(hints, h.Render("piagent mcp")) // setup is piagent's alone
			}
			prob.Fix = strings.Join(hints, "; ")
		}
		p.problems = append(p.problems, prob)
		return
	}
	pi, node, probs := setup.ProbePi(o.machine(), SetupTool{Path: path, Via: via})
	p.pi, p.node = &pi, node
	p.problems = append(p.problems, probs...)
}

// machine is what setup's probing may ask of this machine.
func (o *Ops) machine() setup.Machine { return setup.RealMachine(o.Output, o.LookPath) }

// LookPath finds name on the person's PATH (not the process's own),
// through its absolute entries alone (paths.LookPathAbs).
func (o *Ops) LookPath(name string) string {
	return paths.LookPathAbs(name, o.getenv("PATH"), os.Stat)
}

// resolveProgram is a program named by a variable: a path (relative to the
// working directory) or a name looked up on PATH; "" when not executable.
func (o *Ops) resolveProgram(v string) string {
	v = paths.Expand(o.Home, v)
	if !strings.ContainsRune(v, os.PathSeparator) {
		return o.LookPath(v)
	}
	v = paths.Abs(o.Dir, v)
	if IsExecutable(v) {
		return v
	}
	return ""
}

// IsExecutable reports whether p is a regular file someone may execute.
func IsExecutable(p string) bool { return paths.Executable(p, os.Stat) }

// Setup installs the extension and the adapter through Pi's own package
// commands, seeds the preset and records what it installed. A result comes
// with an error when Stopped says so.
func (o *Ops) Setup(opts SetupOptions) (*SetupResult, error) {
	p, err := o.probe()
	if err != nil {
		return nil, err
	}
	extDir := ExtensionDir(o.Home)
	want := setup.Want{Extension: extDir, Adapter: !opts.NoMCP}
	plan := setup.MakePlan(p.pkgs, want)
	out := &SetupResult{
		Action: "setup", DryRun: opts.DryRun, Pi: p.pi, Node: p.node, Settings: p.settings, Extension: extDir,
		ExtensionFile: ExtensionFilesToWrite(extDir), Actions: []SetupAction{}, Problems: plan.Problems,
		Needs: []Need{}, Record: registry.SetupRecord(o.Home), AddsAdapter: plan.AddsAdapter,
	}
	for _, act := range plan.Actions {
		out.Actions = append(out.Actions, actionOf(act))
	}
	if out.ExtensionFile == nil {
		out.ExtensionFile = []string{}
	}
	// Refuse before changing anything.
	if pre := o.preProblems(p, plan); len(pre) > 0 {
		out.Problems = append(pre, out.Problems...)
		out.Stopped = StopProblems
		return out, ProblemsErr(pre)
	}
	rec, _, err := setup.ReadRecord(out.Record)
	if err != nil {
		return nil, refused(err, text("remove the file; setup writes it again (it only tells uninstall whether setup installed the adapter)"))
	}
	next := nextRecord(rec, extDir, opts, plan)
	if opts.DryRun {
		return out, o.setupDryRun(out, next, opts)
	}
	if err := o.runSetupPlan(p, plan, out, rec, next, opts.Run); err != nil {
		return out, err
	}
	if err := o.checkInstalled(p, plan, want); err != nil {
		return nil, err
	}
	if err := out.seed(opts, false); err != nil {
		return nil, err
	}
	out.RecordChanged, err = setup.WriteRecord(out.Record, next)
	if err != nil {
		return nil, refused(fmt.Errorf("cannot write %s: %w", out.Record, err))
	}
	out.changed()
	// What --check would flag, plain setup says too: a setup that leaves
	// the extension without its piagent is not done.
	_, probs := o.piagentForExtension()
	out.Problems = append(out.Problems, probs...)
	return out, nil
}

// preProblems are what stops setup before it changes anything: Pi or Node
// not fit, or (when an npm package is to be installed) npm not fit.
func (o *Ops) preProblems(p *probe, plan setup.Plan) []setup.Problem {
	pre := p.problems
	for _, act := range plan.Actions {
		if _, _, ok := setup.ParseNPM(act.Source); ok {
			return append(pre, setup.NPMProblems(o.machine(), p.where.AgentDir, paths.AgentDirVar(o.getenv))...)
		}
	}
	return pre
}

// nextRecord is the record setup leaves: what it installed, on top of what
// an earlier setup did.
func nextRecord(rec setup.Record, extDir string, opts SetupOptions, plan setup.Plan) setup.Record {
	next := rec
	next.Extension = extDir
	next.NoMCP = opts.NoMCP
	if !opts.NoMCP {
		next.Preset = opts.Preset
	}
	if plan.AddsAdapter {
		next.AdapterInstalled = true
	}
	return next
}

// setupDryRun fills what setup would change, and changes nothing.
func (o *Ops) setupDryRun(out *SetupResult, next setup.Record, opts SetupOptions) error {
	if err := out.seed(opts, true); err != nil {
		return err
	}
	old, _ := safefile.Read(out.Record, safefile.Options{})
	out.RecordChanged = !bytes.Equal(old, next.Encode())
	out.changed()
	return nil
}

// seed seeds the preset, unless NoMCP.
func (out *SetupResult) seed(opts SetupOptions, dryRun bool) error {
	if opts.NoMCP {
		return nil
	}
	s, err := opts.Seed(dryRun)
	if err != nil {
		return err
	}
	out.Preset, out.Needs, out.presetChanged = s.Answer, s.Needs, s.Changed
	return nil
}

func (out *SetupResult) changed() {
	out.Changed = len(out.Actions) > 0 || len(out.ExtensionFile) > 0 || out.RecordChanged || out.presetChanged
}

// runSetupPlan writes the extension's files and runs Pi's package commands
// in order. When one fails, the record keeps what did happen (so uninstall
// still knows) and the error says what is left.
func (o *Ops) runSetupPlan(p *probe, plan setup.Plan, out *SetupResult, rec, next setup.Record, run RunPackage) error {
	_, written, err := o.PlaceExtension() // out.Extension
	if err != nil {
		return err
	}
	out.ExtensionFile = written
	if out.ExtensionFile == nil {
		out.ExtensionFile = []string{}
	}
	for i, act := range plan.Actions {
		if err := run(p.pi.Path, act); err != nil {
			next.AdapterInstalled = rec.AdapterInstalled || (plan.AddsAdapter && adapterDone(out.Actions[:i]))
			_, _ = setup.WriteRecord(out.Record, next)
			out.Stopped = StopPackage
			var left []string
			for _, rest := range plan.Actions[i:] {
				left = append(left, rest.Command())
			}
			return refused(err, text("Pi's output is above; once it is fixed, run 'piagent setup' again (it picks up where it stopped)"),
				text("left to do: "+strings.Join(left, "; ")))
		}
		out.Actions[i].Done = true
	}
	return nil
}

// checkInstalled reads Pi's list again, the source of truth, and refuses
// when the Pi commands left a problem the plan did not foresee.
func (o *Ops) checkInstalled(p *probe, plan setup.Plan, want setup.Want) error {
	after, err := o.probe()
	if err != nil {
		return err
	}
	st := setup.Inspect(after.pkgs, want.Extension)
	for _, prob := range st.Problems(want) {
		if !hasProblem(plan.Problems, prob.Code) {
			return refused(fmt.Errorf("after the Pi commands, %s: %s", p.settings, prob.Reason), text(prob.Fix))
		}
	}
	return nil
}

func adapterDone(acts []SetupAction) bool {
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

// ProblemsErr is a refusal naming every problem, with every fix once.
func ProblemsErr(ps []SetupProblem) error {
	var reasons, hints []string
	for _, p := range ps {
		reasons = append(reasons, p.Reason)
		if !slices.Contains(hints, p.Fix) {
			hints = append(hints, p.Fix)
		}
	}
	return refused(errors.New(strings.Join(reasons, "; ")), texts(hints...)...)
}

// SetupCheck is `setup --check`'s answer (its --json).
type SetupCheck struct {
	Action    string         `json:"action"` // "check"
	OK        bool           `json:"ok"`
	Pi        *SetupTool     `json:"pi"`
	Node      *SetupTool     `json:"node"`
	Settings  string         `json:"settings"`
	Packages  []SetupPackage `json:"packages"`
	Extension *SetupPackage  `json:"extension"`
	Adapter   *SetupPackage  `json:"adapter"`
	// AdapterInstalled is the version of the adapter's files on disk.
	AdapterInstalled string         `json:"adapterInstalled,omitempty"`
	Ordered          bool           `json:"ordered"`
	Piagent          *SetupTool     `json:"piagent"`
	Record           *SetupRecord   `json:"record"`
	Problems         []SetupProblem `json:"problems"`
}

// WantsAdapter: the adapter belongs to what setup installed (not
// setup --no-mcp).
func (c *SetupCheck) WantsAdapter() bool { return !(c.Record != nil && c.Record.NoMCP) }

// CheckSetup reports what is installed, in which versions, and what is
// missing (OK when nothing is).
func (o *Ops) CheckSetup() (*SetupCheck, error) {
	p, err := o.probe()
	if err != nil {
		return nil, err
	}
	extDir := ExtensionDir(o.Home)
	out := &SetupCheck{Action: "check", Pi: p.pi, Node: p.node, Settings: p.settings, Packages: p.pkgs, Problems: append([]setup.Problem{}, p.problems...)}
	if out.Packages == nil {
		out.Packages = []setup.Package{}
	}
	rec, found, err := setup.ReadRecord(registry.SetupRecord(o.Home))
	if err != nil {
		out.Problems = append(out.Problems, setup.Problem{Code: "record", Reason: err.Error(), Fix: "remove the file and run 'piagent setup'"})
	} else if found {
		out.Record = &rec
	}
	want := setup.Want{Extension: extDir, Adapter: out.WantsAdapter()}
	st := setup.Inspect(p.pkgs, extDir)
	out.Extension, out.Adapter, out.Ordered = st.Extension, st.Adapter, st.Ordered()
	out.Problems = append(out.Problems, st.Problems(want)...)
	out.Problems = append(out.Problems, checkFiles(p, st, extDir, out)...)
	var probs []setup.Problem
	out.Piagent, probs = o.piagentForExtension()
	out.Problems = append(out.Problems, probs...)
	out.OK = len(out.Problems) == 0
	return out, nil
}

// checkFiles are the problems of the installed packages' files: the
// extension's differ from this binary's, or the adapter's are missing.
func checkFiles(p *probe, st setup.Status, extDir string, out *SetupCheck) []setup.Problem {
	var probs []setup.Problem
	if st.Extension != nil {
		if files := ExtensionFilesToWrite(extDir); len(files) > 0 {
			probs = append(probs, setup.Problem{Code: "extension-files",
				Reason: fmt.Sprintf("the extension's files in %s are missing or differ from this binary's", extDir),
				Fix:    "run 'piagent setup' (or: piagent extension path)"})
		}
	}
	if st.Adapter != nil {
		m, ok := setup.ReadManifest(filepath.Join(p.where.AgentDir, "npm", "node_modules", setup.AdapterName))
		if ok {
			out.AdapterInstalled = m.Version
		} else {
			probs = append(probs, setup.Problem{Code: "adapter-files",
				Reason: fmt.Sprintf("%s is listed, but its files are not in %s", st.Adapter.Source, filepath.Join(p.where.AgentDir, "npm")),
				Fix:    "pi install " + st.Adapter.Source})
		}
	}
	return probs
}

// piagentForExtension finds the piagent the extension will run
// (PIAGENT_BIN, else piagent on PATH) and what is wrong with it: setup and
// setup --check report the same problems.
func (o *Ops) piagentForExtension() (tool *SetupTool, probs []setup.Problem) {
	if v := strings.TrimSpace(o.getenv("PIAGENT_BIN")); v != "" {
		if bin := o.resolveProgram(v); bin != "" {
			tool = &SetupTool{Path: bin, Via: "PIAGENT_BIN"}
		} else {
			probs = append(probs, setup.Problem{Code: "piagent-missing",
				Reason: fmt.Sprintf("PIAGENT_BIN names %s, which is not an executable; the extension blocks every tool call without it", v),
				Fix:    "point PIAGENT_BIN at the piagent binary, or unset it to use piagent on PATH"})
		}
	} else if bin := o.LookPath("piagent"); bin != "" {
		tool = &SetupTool{Path: bin, Via: "PATH"}
	} else {
		probs = append(probs, piagentNotOnPath())
	}
	return tool, append(probs, setup.PiagentProblem(o.machine(), tool, Version)...)
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
