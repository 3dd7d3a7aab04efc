package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/secret"
	"github.com/piagent/piagent/internal/shquote"
)

// DefaultScope is the file a write verb writes without --scope.
const DefaultScope = mcpconfig.ScopeGlobal

// AddRequest is a parsed `add`: a new server's definition.
type AddRequest struct {
	Name    string
	URL     string
	Env     [][2]string
	Headers [][2]string
	Command []string
}

// CommandLine is the request as the terminal command that performs it
// (add --print-command): prog's add, into the scope's file, every word
// quoted for a shell.
func (r AddRequest) CommandLine(prog string, sf ScopeFile, project string, replace bool) string {
	parts := append(strings.Fields(prog), "add", shquote.Quote(r.Name), "--scope", sf.Scope)
	if sf.Repository {
		parts = append(parts, "--project", shquote.Quote(project))
	}
	if replace {
		parts = append(parts, "--replace")
	}
	for _, kv := range r.Env {
		parts = append(parts, "--env", shquote.Quote(kv[0]+"="+kv[1]))
	}
	for _, h := range r.Headers {
		parts = append(parts, "--header", shquote.Quote(h[0]+": "+h[1]))
	}
	if r.URL != "" {
		parts = append(parts, "--url", shquote.Quote(r.URL))
	} else {
		parts = append(parts, "--")
		for _, x := range r.Command {
			parts = append(parts, shquote.Quote(x))
		}
	}
	return strings.Join(parts, " ")
}

var (
	serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// usageErr is a usage refusal with hints of words alone.
func usageErr(err error, hints ...string) *Error {
	return &Error{Kind: Usage, Err: err, Hints: texts(hints...)}
}

// checkServerName: what `add` accepts as a new server's name. Tool names are
// built from it, so it stays to letters, digits, '.', '_' and '-'.
func checkServerName(name string) error {
	switch {
	case name == "":
		return usageErr(errors.New("the server name is empty"))
	case len(name) > 64:
		return usageErr(errors.New("the server name is longer than 64 characters"))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return usageErr(errors.New("the server name holds a control character"))
	case !serverNameRE.MatchString(name):
		return usageErr(fmt.Errorf("server name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name))
	}
	return nil
}

// secretRefusal turns a secret check's *secret.Refusal into a usage
// refusal whose hint is the exact form to use.
func secretRefusal(err error) error {
	var r *secret.Refusal
	if errors.As(err, &r) {
		if r.Hint != "" {
			return usageErr(errors.New(strings.TrimSuffix(r.Reason, ":")), r.Hint)
		}
		return usageErr(errors.New(r.Reason))
	}
	return usageErr(err)
}

// ParseAdd checks every part of an add: the name (args[0], before the --
// at dash), exactly one of url or a command, and no secret in envs,
// headers, the URL or the command.
func ParseAdd(args []string, dash int, url string, envs, headers []string) (AddRequest, error) {
	var req AddRequest
	switch {
	case len(args) == 0 || dash == 0:
		return req, usageErr(errors.New("add takes NAME first: add NAME --url URL, or add NAME -- COMMAND [ARGS...]"))
	case dash < 0 && len(args) > 1:
		return req, usageErr(errors.New("add takes one NAME; put the command after --"), "add NAME -- "+strings.Join(args[1:], " "))
	case dash > 1:
		return req, usageErr(errors.New("add takes one NAME before --"))
	}
	req.Name = args[0]
	if err := checkServerName(req.Name); err != nil {
		return req, err
	}
	if dash == 1 {
		req.Command = args[1:]
	}
	if err := req.checkTransport(url, envs, headers); err != nil {
		return req, err
	}
	if url != "" {
		if err := secret.CheckURL(url); err != nil {
			return req, secretRefusal(err)
		}
		req.URL = url
	}
	var err error
	if req.Env, err = parseEnvs(envs); err != nil {
		return req, err
	}
	if req.Headers, err = parseHeaders(headers); err != nil {
		return req, err
	}
	return req, checkCommand(req.Command)
}

// checkTransport: exactly one of url or a command, each with its own kind
// of pairs.
func (r AddRequest) checkTransport(url string, envs, headers []string) error {
	switch {
	case url != "" && len(r.Command) > 0:
		return usageErr(errors.New("give --url or a command after --, not both"))
	case url == "" && len(r.Command) == 0:
		return usageErr(errors.New("give --url URL or a command after --"))
	case url == "" && len(headers) > 0:
		return usageErr(errors.New("--header applies to a --url server"))
	case url != "" && len(envs) > 0:
		return usageErr(errors.New("--env applies to a command server; a --url server takes --header"))
	}
	return nil
}

// parseEnvs reads --env NAME=VALUE pairs, refusing a secret.
func parseEnvs(envs []string) ([][2]string, error) {
	var out [][2]string
	seen := map[string]bool{}
	for _, kv := range envs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envNameRE.MatchString(k) {
			return nil, usageErr(errors.New("--env takes NAME=VALUE with NAME made of letters, digits and '_'"), "--env 'NAME=${NAME}'")
		}
		if seen[k] {
			return nil, usageErr(fmt.Errorf("--env %s is given twice", k))
		}
		seen[k] = true
		if err := secret.CheckEnv(k, v); err != nil {
			return nil, secretRefusal(err)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// parseHeaders reads --header "Name: value" pairs, refusing a secret.
func parseHeaders(headers []string) ([][2]string, error) {
	var out [][2]string
	seen := map[string]bool{}
	for _, h := range headers {
		name, value, err := secret.ParseHeader(h)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--header: %w", err), "--header 'Name: value'")
		}
		if seen[strings.ToLower(name)] {
			return nil, usageErr(fmt.Errorf("--header %s is given twice", name))
		}
		seen[strings.ToLower(name)] = true
		if err := secret.CheckHeader(name, value); err != nil {
			return nil, secretRefusal(err)
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}

// checkCommand refuses a command or argument that looks like a secret.
func checkCommand(command []string) error {
	for i, arg := range command {
		if secret.IsReference(arg) {
			continue
		}
		if rule, ok := secret.SecretValue(arg); ok {
			what := fmt.Sprintf("argument %d of the command", i)
			if i == 0 {
				what = "the command"
			}
			return usageErr(fmt.Errorf("%s looks like a secret (%s), so it cannot be written into MCP config", what, rule),
				"export it in your shell and write ${NAME} in its place; the adapter expands it in args")
		}
	}
	return nil
}

// EntryJSON is the definition, keys in the order a person reads them.
func (r AddRequest) EntryJSON() []byte {
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
	if len(r.Command) > 0 {
		cmd, _ := json.Marshal(r.Command[0])
		member("command", cmd)
		if len(r.Command) > 1 {
			args, _ := json.Marshal(r.Command[1:])
			member("args", args)
		}
		if len(r.Env) > 0 {
			member("env", pairsJSON(r.Env))
		}
	} else {
		u, _ := json.Marshal(r.URL)
		member("url", u)
		if len(r.Headers) > 0 {
			member("headers", pairsJSON(r.Headers))
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// pairsJSON is an object of the pairs, in their order.
func pairsJSON(list [][2]string) []byte {
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

// AddOptions are the inputs of add.
type AddOptions struct {
	Request AddRequest
	Project string    // absolute
	File    ScopeFile // the file to write (ScopeFile)
	Replace bool      // replace a server of that name already in the file
	DryRun  bool
}

// EditResult is a write verb's edit of one file: the file before and
// after, and whether it changed (mcpedit.Result).
type EditResult = mcpedit.Result

// Added is what add wrote: the file edit, and for FinishWrite the
// approval a repository scope recorded before it.
type Added struct {
	Replaced bool // a server of that name was in the file
	Result   mcpedit.Result
	Pre      map[string]string
}

// Add writes a new server's definition into one file. A repository scope
// writes the server and its approval, both or neither: it approves what it
// writes before writing it (ApproveFirst); the caller finishes with
// FinishWrite.
func (o *Ops) Add(opt AddOptions) (Added, error) {
	req, sf := opt.Request, opt.File
	g, err := o.Gate(opt.Project)
	if err != nil {
		return Added{}, err
	}
	if sf.Repository && !opt.DryRun && g.StoreErr != nil {
		return Added{}, refused(fmt.Errorf("nothing was added: %s would be added without its approval, because the approval store cannot be used: %w", req.Name, g.StoreErr),
			StoreHints(o.ApprovalStore(), g.StoreErr)...)
	}
	out := Added{Pre: map[string]string{}}
	eo := mcpedit.Options{DryRun: opt.DryRun}
	if sf.Repository {
		eo.Prepare = o.ApproveFirst(opt.Project, sf.Path, func() []string { return []string{req.Name} }, out.Pre)
	}
	out.Result, err = o.EditFile(g, sf.Path, sf.Repository, eo, func(d *mcpedit.Doc) error {
		if d.Has(req.Name) {
			out.Replaced = true
			if !opt.Replace {
				return refused(fmt.Errorf("%s is already defined in %s", req.Name, sf.Path),
					text("add --replace to overwrite it, or choose another name"))
			}
		}
		return d.SetServer(req.Name, req.EntryJSON())
	})
	return out, err
}
