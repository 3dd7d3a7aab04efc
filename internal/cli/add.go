package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/secret"
)

func completeScopes(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return ops.WriteScopes, cobra.ShellCompDirectiveNoFileComp
}

// writeResultJSON is the --json answer of add, remove, enable, disable and
// a preset apply.
type writeResultJSON struct {
	Action          string             `json:"action"`
	Name            string             `json:"name,omitempty"`
	Preset          string             `json:"preset,omitempty"`
	Scope           string             `json:"scope"`
	File            string             `json:"file"`
	Changed         bool               `json:"changed"`
	DryRun          bool               `json:"dryRun"`
	Approved        []string           `json:"approved"`
	DecisionDropped bool               `json:"decisionDropped"`
	FileRemoved     bool               `json:"fileRemoved,omitempty"` // enable left the file empty and removed it
	Servers         []presetServerJSON `json:"servers,omitempty"`
	Needs           []needJSON         `json:"needs"`
	Notes           []string           `json:"notes"`
	Content         string             `json:"content,omitempty"` // --dry-run: the file as it would read
	Command         string             `json:"command,omitempty"` // --print-command
}

type needJSON = ops.Need

func newResult(action string) writeResultJSON {
	return writeResultJSON{Action: action, Approved: []string{}, Needs: []needJSON{}, Notes: []string{}}
}

// addRequest is a parsed `add`.
type addRequest struct {
	Name    string
	URL     string
	Env     [][2]string
	Headers [][2]string
	Command []string
}

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// checkServerName: what `add` accepts as a new server's name. Tool names are
// built from it, so it stays to letters, digits, '.', '_' and '-'.
func checkServerName(name string) error {
	switch {
	case name == "":
		return usagef("the server name is empty")
	case len(name) > 64:
		return usagef("the server name is longer than 64 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return usagef("the server name holds a control character")
	case !serverNameRE.MatchString(name):
		return usageErr(fmt.Errorf("server name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name))
	}
	return nil
}

// refusal turns a secret check's *secret.Refusal into a usage error whose
// hint is the exact form to use.
func refusal(err error) error {
	var r *secret.Refusal
	if errors.As(err, &r) {
		if r.Hint != "" {
			return usageErr(errors.New(strings.TrimSuffix(r.Reason, ":")), r.Hint)
		}
		return usageErr(errors.New(r.Reason))
	}
	return usageErr(err)
}

// parseAdd checks every part of the request: the name, exactly one of --url
// or a command, and no secret in --env, --header, the URL or the command.
func parseAdd(args []string, dash int, url string, envs, headers []string) (addRequest, error) {
	var req addRequest
	switch {
	case len(args) == 0 || dash == 0:
		return req, usagef("add takes NAME first: add NAME --url URL, or add NAME -- COMMAND [ARGS...]")
	case dash < 0 && len(args) > 1:
		return req, usageErr(fmt.Errorf("add takes one NAME; put the command after --"), "add NAME -- "+strings.Join(args[1:], " "))
	case dash > 1:
		return req, usageErr(fmt.Errorf("add takes one NAME before --"))
	}
	req.Name = args[0]
	if err := checkServerName(req.Name); err != nil {
		return req, err
	}
	if dash == 1 {
		req.Command = args[1:]
	}
	switch {
	case url != "" && len(req.Command) > 0:
		return req, usagef("give --url or a command after --, not both")
	case url == "" && len(req.Command) == 0:
		return req, usagef("give --url URL or a command after --")
	case url == "" && len(headers) > 0:
		return req, usagef("--header applies to a --url server")
	case url != "" && len(envs) > 0:
		return req, usagef("--env applies to a command server; a --url server takes --header")
	}
	if url != "" {
		if err := secret.CheckURL(url); err != nil {
			return req, refusal(err)
		}
		req.URL = url
	}
	seen := map[string]bool{}
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envNameRE.MatchString(k) {
			return req, usageErr(fmt.Errorf("--env takes NAME=VALUE with NAME made of letters, digits and '_'"), "--env 'NAME=${NAME}'")
		}
		if seen[k] {
			return req, usagef("--env %s is given twice", k)
		}
		seen[k] = true
		if err := secret.CheckEnv(k, v); err != nil {
			return req, refusal(err)
		}
		req.Env = append(req.Env, [2]string{k, v})
	}
	seen = map[string]bool{}
	for _, h := range headers {
		name, value, err := secret.ParseHeader(h)
		if err != nil {
			return req, usageErr(fmt.Errorf("--header: %w", err), "--header 'Name: value'")
		}
		if seen[strings.ToLower(name)] {
			return req, usagef("--header %s is given twice", name)
		}
		seen[strings.ToLower(name)] = true
		if err := secret.CheckHeader(name, value); err != nil {
			return req, refusal(err)
		}
		req.Headers = append(req.Headers, [2]string{name, value})
	}
	for i, arg := range req.Command {
		if secret.IsReference(arg) {
			continue
		}
		if rule, ok := secret.SecretValue(arg); ok {
			what := fmt.Sprintf("argument %d of the command", i)
			if i == 0 {
				what = "the command"
			}
			return req, usageErr(fmt.Errorf("%s looks like a secret (%s), so it cannot be written into MCP config", what, rule),
				"export it in your shell and write ${NAME} in its place; the adapter expands it in args")
		}
	}
	return req, nil
}

// entryJSON is the definition, keys in the order a person reads them.
func (r addRequest) entryJSON() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(k string, v []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	pairs := func(list [][2]string) []byte {
		var o bytes.Buffer
		o.WriteByte('{')
		for i, kv := range list {
			if i > 0 {
				o.WriteByte(',')
			}
			k, _ := json.Marshal(kv[0])
			v, _ := json.Marshal(kv[1])
			o.Write(k)
			o.WriteByte(':')
			o.Write(v)
		}
		o.WriteByte('}')
		return o.Bytes()
	}
	if len(r.Command) > 0 {
		cmd, _ := json.Marshal(r.Command[0])
		member("command", cmd)
		if len(r.Command) > 1 {
			args, _ := json.Marshal(r.Command[1:])
			member("args", args)
		}
		if len(r.Env) > 0 {
			member("env", pairs(r.Env))
		}
	} else {
		u, _ := json.Marshal(r.URL)
		member("url", u)
		if len(r.Headers) > 0 {
			member("headers", pairs(r.Headers))
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// commandLine is the request as the terminal command that performs it.
func (a *app) commandLine(r addRequest, sf ops.ScopeFile, project string, replace bool) string {
	parts := append(strings.Fields(a.mcpCmd()), "add", shellQuote(r.Name), "--scope", sf.Scope)
	if sf.Repository {
		parts = append(parts, "--project", shellQuote(project))
	}
	if replace {
		parts = append(parts, "--replace")
	}
	for _, kv := range r.Env {
		parts = append(parts, "--env", shellQuote(kv[0]+"="+kv[1]))
	}
	for _, h := range r.Headers {
		parts = append(parts, "--header", shellQuote(h[0]+": "+h[1]))
	}
	if r.URL != "" {
		parts = append(parts, "--url", shellQuote(r.URL))
	} else {
		parts = append(parts, "--")
		for _, x := range r.Command {
			parts = append(parts, shellQuote(x))
		}
	}
	return strings.Join(parts, " ")
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
	scope := c.Flags().String("scope", mcpconfig.ScopeGlobal, "the file to write: "+strings.Join(ops.WriteScopes, ", "))
	replace := c.Flags().Bool("replace", false, "replace a server of that name already in the file")
	dryRun := c.Flags().Bool("dry-run", false, "print the file as it would read and change nothing")
	asJSON := c.Flags().Bool("json", false, "print JSON")
	printCmd := c.Flags().Bool("print-command", false, "print the terminal command for this request instead of writing")
	_ = c.RegisterFlagCompletionFunc("scope", completeScopes)
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// add foo npx -y foo-mcp: -y is the server's, not add's.
		if strings.Contains(err.Error(), "unknown") && c.ArgsLenAtDash() < 0 {
			return usageErr(err, "put the server's command after --: "+a.mcpCmd()+" add NAME [--scope SCOPE] -- COMMAND [ARGS...]")
		}
		return usageErr(err, fmt.Sprintf("run '%s --help' for usage", c.CommandPath()))
	})
	c.RunE = run(func(c *cobra.Command, args []string) error {
		req, err := parseAdd(args, c.ArgsLenAtDash(), *url, *envs, *headers)
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
		out := newResult("add")
		out.Name, out.Scope, out.File, out.DryRun = req.Name, sf.Scope, sf.Path, *dryRun
		if *printCmd {
			out.Command = a.commandLine(req, sf, project, *replace)
			if *asJSON {
				return a.writeJSON(out)
			}
			fmt.Fprintln(a.env.Stdout, out.Command)
			return nil
		}
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		if sf.Repository && !*dryRun && g.StoreErr != nil {
			// A repository scope writes the server and its approval: both
			// or neither.
			return refused(fmt.Errorf("nothing was added: %s would be added without its approval, because the approval store cannot be used: %w", req.Name, g.StoreErr),
				storeHints(registry.ApprovalStore(a.env.Home), g.StoreErr)...)
		}
		existed := false
		o := mcpedit.Options{DryRun: *dryRun}
		pre := map[string]string{}
		if sf.Repository {
			o.Prepare = a.op().ApproveFirst(project, sf.Path, func() []string { return []string{req.Name} }, pre)
		}
		res, err := a.op().EditFile(g, sf.Path, sf.Repository, o, func(d *mcpedit.Doc) error {
			if d.Has(req.Name) {
				existed = true
				if !*replace {
					return refused(fmt.Errorf("%s is already defined in %s", req.Name, sf.Path),
						"add --replace to overwrite it, or choose another name")
				}
			}
			return d.SetServer(req.Name, req.entryJSON())
		})
		if err != nil {
			return err
		}
		if existed {
			out.Action = "replace"
		}
		out.File, out.Changed = res.Path, res.Changed
		return a.finishWrite(project, &out, res, []string{req.Name}, pre, *asJSON)
	})
	return c
}

// finishWrite reports a write: the scope and file, the approval a repository
// scope records for what the person just wrote, notes about higher layers,
// and what the servers still need (stderr).
// pre holds the digests approveFirst recorded before the write.
func (a *app) finishWrite(project string, out *writeResultJSON, res mcpedit.Result, written []string, pre map[string]string, asJSON bool) error {
	w := a.env.Stdout
	verb := map[string]string{"add": "added", "replace": "replaced"}[out.Action]
	if out.DryRun {
		out.Content = string(res.After)
		if !asJSON {
			if out.Preset == "" {
				fmt.Fprintf(w, "would %s %s (scope %s)\n", out.Action, out.Name, out.Scope)
			}
			if res.Changed {
				fmt.Fprintf(w, "would write %s:\n%s", out.File, res.After)
				if !bytes.HasSuffix(res.After, []byte("\n")) {
					fmt.Fprintln(w)
				}
			} else {
				fmt.Fprintf(w, "no change to %s\n", out.File)
			}
			fmt.Fprintln(w, "dry run: nothing written")
			return nil
		}
		return a.writeJSON(out)
	}
	wr, approveErr := a.op().FinishWrite(project, res, written, pre, out.Preset == "")
	out.Approved = append(out.Approved, wr.Approved...)
	for _, n := range wr.Notes {
		out.Notes = append(out.Notes, a.fix(n))
	}
	out.Needs = append(out.Needs, wr.Needs...)
	if asJSON {
		if err := a.writeJSON(out); err != nil {
			return err
		}
	} else {
		if out.Preset == "" {
			if res.Changed {
				fmt.Fprintf(w, "%s %s (scope %s)\n", verb, out.Name, out.Scope)
			} else {
				fmt.Fprintf(w, "%s is already defined so (scope %s); no change\n", out.Name, out.Scope)
			}
		}
		fmt.Fprintf(w, "file: %s\n", out.File)
		for _, name := range out.Approved {
			fmt.Fprintf(w, "approved %s for this project; a teammate who clones still has to approve it\n", name)
		}
		for _, n := range out.Notes {
			fmt.Fprintf(a.env.Stderr, "note: %s\n", n)
		}
		printNeeds(a.env.Stderr, out.Needs)
	}
	return approveErr
}

func printNeeds(w io.Writer, needs []needJSON) {
	if len(needs) == 0 {
		return
	}
	fmt.Fprintln(w, "before the first call:")
	for _, n := range needs {
		fmt.Fprintf(w, "  %s: %s\n", n.Server, n.Text)
	}
}
