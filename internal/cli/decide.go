package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/ops"
)

// decisionJSON is the --json answer of approve and reject.
type decisionJSON struct {
	Action         string `json:"action"` // "approve" or "reject"
	Server         string `json:"server"`
	Project        string `json:"project"`
	Decision       string `json:"decision"` // "approved" or "rejected"
	Digest         string `json:"digest"`
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	Store          string `json:"store"`
}

// previewJSON is the --json answer of approve --dry-run (and of approve
// --tools, which has no decision to name): what consent would cover, and
// the preview a person reads, as the terminal shows it. A client records
// consent to exactly this preview with approve --yes --digest
// ApprovalDigest.
type previewJSON struct {
	Action         string `json:"action"` // "approve" or "approve-tools"
	Server         string `json:"server"`
	Project        string `json:"project"`
	State          string `json:"state"`
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	DryRun         bool   `json:"dryRun"`
	// Waiting (approve-tools): what the server offers differs from its pin,
	// so there is something to accept; Accepted: it was accepted.
	Waiting  bool   `json:"waiting,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	Preview  string `json:"preview"`
}

// resetJSON is the --json answer of reset: the projects whose decisions
// were dropped (with a server, that server's).
type resetJSON struct {
	Action  string   `json:"action"` // "reset"
	Project string   `json:"project,omitempty"`
	Server  string   `json:"server,omitempty"`
	Stale   bool     `json:"stale,omitempty"`
	Dropped []string `json:"dropped"`
	Store   string   `json:"store"`
}

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
	c.ValidArgsFunction = a.completeServers(func(s *gate.Server) bool { return s.Repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		if o.tools {
			if o.json && !o.yes && !o.dryRun {
				return usagef("--json accepts tools only with --yes: add --dry-run to see them first")
			}
			return a.approveTools(g, args[0], o.yes, o.dryRun, o.json)
		}
		return a.approve(g, args[0], o)
	})
	return c
}

// approveFlags are approve's flags.
type approveFlags struct {
	yes, dryRun, tools, json bool
	digest                   string
}

// approve shows what consent to a server covers, then records it: with
// --yes, or when the person answers yes.
func (a *app) approve(g *gate.Gate, name string, o approveFlags) error {
	s, err := a.op().Approvable(g, name)
	if err != nil {
		return err
	}
	d := a.getData(g, s)
	if err := a.op().Renderable(g, s, d.View); err != nil {
		return err
	}
	if o.dryRun {
		return a.approvePreview(g, s, d, o.json)
	}
	if o.json && !o.yes {
		return usagef("--json records consent only with --yes: read 'piagent-mcp get %s --json' first", s.Name)
	}
	preview := a
	if o.json {
		// The preview is the person's; the answer is the JSON.
		quiet := *a
		quiet.env.Stdout = io.Discard
		preview = &quiet
	}
	preview.printApproval(g, s, d)
	preview.printChange(g, s)
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
	return a.printDecision("approve", dec, o.json)
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

// approvePreview shows what consent to s would cover and records nothing:
// the preview, or with asJSON the preview inside previewJSON.
func (a *app) approvePreview(g *gate.Gate, s *gate.Server, d getJSON, asJSON bool) error {
	if !asJSON {
		a.printApproval(g, s, d)
		a.printChange(g, s)
		return nil
	}
	var text strings.Builder
	quiet := *a
	quiet.env.Stdout = &text
	quiet.printApproval(g, s, d)
	quiet.printChange(g, s)
	return a.writeJSON(previewJSON{Action: "approve", Server: s.Name, Project: g.Project, State: s.State,
		ApprovalDigest: s.ApprovalDigest(), DryRun: true, Preview: text.String()})
}

// printApproval shows what consent covers: the merged definition, the part
// the repository owns, and the files pinned with it.
func (a *app) printApproval(g *gate.Gate, s *gate.Server, d getJSON) {
	w := a.env.Stdout
	fmt.Fprintf(w, "%s (%s), %s\n", s.Name, s.State, s.Config.RepositoryReason)
	if merged, owned := ops.IndentJSON(d.Definition), ops.IndentJSON(d.Owned); merged == owned {
		// Everything comes from the repository: one listing, not two.
		fmt.Fprintf(w, "definition (merged: what will run; all of it from the repository, pinned by %s):\n%s\n", s.Digest, merged)
	} else {
		fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", merged)
		fmt.Fprintf(w, "owned by the repository (pinned by %s):\n%s\n", s.Digest, owned)
	}
	if len(s.Pinned) > 0 {
		for _, t := range ops.PinnedTrees(s.Pinned) {
			fmt.Fprintf(w, "pinned: every file under %s (%d files, node_modules included), since code the definition runs there may load any of them; any change there asks again\n", t.Tree, t.Files)
		}
		fmt.Fprintf(w, "pinned files: (any change asks again)\n")
		for i, p := range s.Pinned {
			if i == 20 && len(s.Pinned) > 21 {
				fmt.Fprintf(w, "  … and %d more\n", len(s.Pinned)-20)
				break
			}
			state := p.Digest
			if p.Digest == "" {
				state = "missing"
			}
			fmt.Fprintf(w, "  %s %s\n", p.Path, state)
		}
	}
	a.printFlags(g, d.Flags)
	previewTools(w, d.Tools, s.Name)
	fmt.Fprintf(w, "sandbox: %s\n", d.Sandbox)
	if gr := grantsText(d.View); gr != "" {
		fmt.Fprintf(w, "grants: %s\n", gr)
	}
	fmt.Fprintf(w, "approval digest: %s\n", d.ApprovalDigest)
}

// printChange shows, for a server approved before whose repository part
// changed since, what changed: a line diff of the part the person approved
// (kept in the store beside its digest) against the part there now.
func (a *app) printChange(g *gate.Gate, s *gate.Server) {
	c, ok := a.op().Changed(g, s)
	if !ok {
		return
	}
	w := a.env.Stdout
	if c.Was == nil {
		fmt.Fprintf(w, "changed since you approved it (%s); the store kept only its digest then, so the whole definition is above\n", orDash(c.DecidedAt))
		return
	}
	fmt.Fprintf(w, "changed since you approved it (%s), in the repository's part (- approved, + now):\n", orDash(c.DecidedAt))
	for _, l := range c.Diff {
		fmt.Fprintln(w, l)
	}
}

// printDecision says what approve or reject recorded.
func (a *app) printDecision(action string, dec ops.Decision, asJSON bool) error {
	if asJSON {
		return a.writeJSON(decisionJSON{Action: action, Server: dec.Server, Project: dec.Project, Decision: dec.Decision,
			Digest: dec.Digest, ApprovalDigest: dec.ApprovalDigest, Store: dec.Store})
	}
	fmt.Fprintf(a.env.Stdout, "%s %s for %s\n", dec.Decision, dec.Server, dec.Project)
	fmt.Fprintf(a.env.Stdout, "recorded in %s\n", dec.Store)
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
	c.ValidArgsFunction = a.completeServers(func(s *gate.Server) bool { return s.Repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		dec, err := a.op().Reject(g, args[0])
		if err != nil {
			return err
		}
		return a.printDecision("reject", dec, *asJSON)
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
	c.ValidArgsFunction = a.completeServers(func(s *gate.Server) bool { return s.Repository })
	c.RunE = run(func(c *cobra.Command, args []string) error {
		if *stale {
			if len(args) > 0 {
				return usagef("reset --stale takes no server name")
			}
			r, err := a.op().ResetStale()
			if err != nil {
				return err
			}
			return a.printReset(r, true, *asJSON)
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
		return a.printReset(r, false, *asJSON)
	})
	return c
}

// printReset says which decisions reset forgot.
func (a *app) printReset(r ops.Reset, stale, asJSON bool) error {
	if asJSON {
		return a.writeJSON(resetJSON{Action: "reset", Project: r.Project, Server: r.Server, Stale: stale, Dropped: r.Dropped, Store: r.Store})
	}
	w := a.env.Stdout
	found, project, name := len(r.Dropped) > 0, r.Project, r.Server
	switch {
	case stale:
		for _, p := range r.Dropped {
			fmt.Fprintf(w, "dropped decisions for %s (gone)\n", p)
		}
		if !found {
			fmt.Fprintln(w, "no stale projects")
		}
	case !found && name != "":
		fmt.Fprintf(w, "no decision recorded for %s in %s\n", name, project)
	case !found:
		fmt.Fprintf(w, "no decisions recorded for %s\n", project)
	case name != "":
		fmt.Fprintf(w, "forgot the decision for %s in %s\n", name, project)
	default:
		fmt.Fprintf(w, "forgot every decision for %s\n", project)
	}
	fmt.Fprintf(w, "store: %s\n", r.Store)
	return nil
}
