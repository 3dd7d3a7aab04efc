package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/ops"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/policy"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/secret"
	"github.com/piagent/piagent/internal/serverrun"
)

type contributionJSON struct {
	Layer                string         `json:"layer"`
	Scope                string         `json:"scope"`
	File                 string         `json:"file"`
	Kind                 string         `json:"kind,omitempty"`
	RepositoryControlled bool           `json:"repositoryControlled"`
	RepositoryReason     string         `json:"repositoryReason,omitempty"`
	Entry                map[string]any `json:"entry"`
}

type getJSON struct {
	serverJSON
	Definition    map[string]any     `json:"definition"`
	Contributions []contributionJSON `json:"contributions"`
	PinnedFiles   []gate.PinnedFile  `json:"pinnedFiles"`
	Owned         any                `json:"repositoryOwned,omitempty"`
	// ApprovalDigest covers the repository-owned fragment and every pinned
	// file: `approve --digest` records consent only while it still holds.
	ApprovalDigest string `json:"approvalDigest,omitempty"`
	// Flags are what a person should look at before approving.
	Flags []flagJSON `json:"flags"`
	// Sandbox is how piagent pi starts the server: "confined", "remote",
	// "not confined: …" or "off" (the user's serverSandbox); Grants what a
	// person let it reach beyond its profile.
	Sandbox string      `json:"sandbox"`
	Grants  grant.Grant `json:"grants"`
	// Environment names the variables of this machine's environment the
	// server receives beyond the sandbox's default set (PATH, HOME, locale,
	// proxies, …): its definition's own keys, its grant's and the person's
	// passEnv. Names only, never values; empty for a remote server.
	Environment []string `json:"environment"`
	// Tools is what the server offers the model against its catalogue pin.
	Tools ops.Tools `json:"tools"`
	// LastRun is how the server's last confined run ended, when it failed:
	// the sandbox may have stopped it (Fix names the grant).
	LastRun *lastRunJSON `json:"lastRun,omitempty"`
}

type lastRunJSON struct {
	serverrun.Record
	Text string `json:"text"`
	Fix  string `json:"fix"`
}

// flagJSON is one thing the preview draws attention to.
type flagJSON struct {
	Code string `json:"code"` // "code-loading", "path-in-project", "committed-secret"
	Key  string `json:"key"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text"`
}

// getData is a server's definition for a person to read. Values a
// repository wrote are shown as written (it commits them; the person must
// see what will run), except those that look like a secret, which stay
// masked and are flagged with their file and line. Values from the user's
// own files stay masked. Code-loading variables are always shown.
func (a *app) getData(g *gate.Gate, s *gate.Server) getJSON {
	out := getJSON{serverJSON: a.serverRow(g, s), PinnedFiles: s.Pinned, Flags: []flagJSON{}, Tools: a.op().Tools(g, s)}
	if out.PinnedFiles == nil {
		out.PinnedFiles = []gate.PinnedFile{}
	}
	// The merge is shallow per key: a key's value comes whole from the last
	// contribution that sets it.
	owner := map[string]mcpconfig.Contribution{}
	for _, c := range s.Config.Contributions {
		for k := range c.Entry {
			owner[k] = c
		}
	}
	masked, written := secret.Mask(s.Config.Entry), map[string]any{}
	for k, v := range s.Config.Entry {
		if c, ok := owner[k]; ok && c.Repository {
			written[k] = v
		}
	}
	shown, _ := secret.MaskWritten(written)
	for k, v := range shown {
		masked[k] = v
	}
	secret.ShowCodeLoading(masked, s.Config.Entry)
	out.Definition = masked
	for _, c := range s.Config.Contributions {
		e := secret.Mask(c.Entry)
		if c.Repository {
			var secrets []string
			e, secrets = secret.MaskWritten(c.Entry)
			for _, key := range secrets {
				out.Flags = append(out.Flags, flagJSON{Code: "committed-secret", Key: key, File: c.File, Line: lineOf(c.File, valueAt(c.Entry, key)),
					Text: "the repository commits what looks like a secret; it stays masked here"})
			}
		} else {
			secret.ShowCodeLoading(e, c.Entry)
		}
		out.Contributions = append(out.Contributions, contributionJSON{Layer: c.Layer, Scope: c.Scope, File: c.File, Kind: c.Kind,
			RepositoryControlled: c.Repository, RepositoryReason: c.Reason, Entry: e})
	}
	out.Flags = append(out.Flags, codeFlags(s, owner, g.View.Cwd)...)
	out.Sandbox = confinement(s, g.View.Cwd)
	if out.Sandbox == "confined" && a.op().Confine(g.View.Cwd) == nil {
		out.Sandbox = "off: serverSandbox is off in your policy; the server runs with everything you have"
	}
	out.Grants, _ = grant.Of(a.env.Home, g.Project, s.Name)
	out.Environment = []string{}
	if cmd, _ := s.Config.Entry["command"].(string); cmd != "" {
		env, _ := s.Config.Entry["env"].(map[string]any)
		names := slices.Collect(maps.Keys(env))
		names = append(names, out.Grants.Env...)
		if pol, err := policy.LoadSettings(a.env.Home, g.View.Cwd); err == nil && pol.Err() == nil {
			names = append(names, pol.PassEnv()...)
		}
		slices.Sort(names)
		out.Environment = slices.Compact(names)
	}
	if r, ok := a.lastFailure(g.Project, s.Name); ok {
		out.LastRun = &lastRunJSON{Record: r, Text: a.failureText(r), Fix: a.failureFix(r)}
	}
	if s.Repository {
		out.Owned = s.Owned()
		out.ApprovalDigest = s.ApprovalDigest()
	}
	return out
}

// codeFlags flags every code-loading variable of the merged definition, and
// a PATH that names a folder inside the project.
func codeFlags(s *gate.Server, owner map[string]mcpconfig.Contribution, project string) []flagJSON {
	env, _ := s.Config.Entry["env"].(map[string]any)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []flagJSON
	from := owner["env"]
	for _, k := range keys {
		v, _ := env[k].(string)
		switch {
		case secret.CodeLoading(k):
			out = append(out, flagJSON{Code: "code-loading", Key: "env." + k, File: from.File,
				Text: fmt.Sprintf("%s makes the server load code: %s; the files it names are pinned with the approval", k, v)})
		case k == "PATH":
			for _, d := range filepath.SplitList(v) {
				if d != "" && !strings.HasPrefix(d, "$") && paths.Within(project, paths.Abs(project, d)) {
					out = append(out, flagJSON{Code: "path-in-project", Key: "env.PATH", File: from.File,
						Text: fmt.Sprintf("PATH puts %s, a folder inside the project, before the system's: its files are pinned with the approval", d)})
					break
				}
			}
		}
	}
	return out
}

// valueAt is the string at a MaskWritten key path ("env.X", "args[2]").
func valueAt(e map[string]any, key string) string {
	var cur any = e
	for _, part := range strings.Split(key, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		if m, ok := cur.(map[string]any); ok {
			cur = m[name]
		}
		if hasIdx {
			var i int
			fmt.Sscanf(strings.TrimSuffix(idx, "]"), "%d", &i)
			if l, ok := cur.([]any); ok && i < len(l) {
				cur = l[i]
			}
		}
	}
	s, _ := cur.(string)
	return s
}

// lineOf finds the first line of file holding value as a JSON string; 0
// when it cannot tell.
func lineOf(file, value string) int {
	if value == "" {
		return 0
	}
	data, err := safefile.Read(file, safefile.Options{})
	if err != nil {
		return 0
	}
	enc, _ := json.Marshal(value)
	i := strings.Index(string(data), string(enc))
	if i < 0 {
		i = strings.Index(string(data), value)
	}
	if i < 0 {
		return 0
	}
	return strings.Count(string(data[:i]), "\n") + 1
}

func (a *app) getCommand() *cobra.Command {
	c := &cobra.Command{
		Use: "get NAME",
		Example: `  piagent-mcp get internal
  piagent-mcp get internal --json`,
		Short: "Show a server's merged definition (what will run), its state and where every part came from",
		Args:  exactArgs(1, "NAME"),
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.ValidArgsFunction = a.completeServers(nil)
	c.RunE = run(func(c *cobra.Command, args []string) error {
		g, err := a.gate(c)
		if err != nil {
			return err
		}
		s, err := ops.Server(g, args[0])
		if err != nil {
			return err
		}
		d := a.getData(g, s)
		if err := a.renderable(g, s, d); err != nil {
			return err
		}
		if *asJSON {
			return a.writeJSON(d)
		}
		a.printServer(g, s, d)
		return nil
	})
	return c
}

// renderable fails when the preview of s cannot be shown: a value JSON
// cannot write (a NaN or an infinity held as a float, as a codex TOML nan
// or inf is). What cannot be shown cannot be consented to (issue 39, item
// 5): get exits non-zero and approve refuses, naming the file and line.
// Numbers beyond float64 in a JSON file are kept as written, and shown.
func (a *app) renderable(g *gate.Gate, s *gate.Server, d getJSON) error {
	_, err1 := json.Marshal(d.Definition)
	_, err2 := json.Marshal(d.Owned)
	if err1 == nil && err2 == nil {
		return nil
	}
	key, _ := unrenderable(d.Definition, "")
	if key == "" {
		key, _ = unrenderable(d.Owned, "")
	}
	file := s.Config.Source.File
	where := ops.Display(a.env.Home, g.View.Cwd, file)
	last := key[strings.LastIndexAny(key, ".]")+1:]
	if n := lineOf(file, last); n > 0 {
		where += fmt.Sprintf(":%d", n)
	}
	return refused(fmt.Errorf("the definition of %s cannot be shown: %s in %s is a number JSON cannot write (%v), so it cannot be previewed or approved", s.Name, cmp.Or(key, "a value"), where, cmp.Or(err1, err2)),
		"write the value as a finite number (or remove it) in "+where+", then run '"+a.mcpCmd()+" get "+s.Name+"' again")
}

// unrenderable finds the first value in v JSON cannot write, with its path.
func unrenderable(v any, path string) (string, bool) {
	switch x := v.(type) {
	case float64:
		return path, math.IsNaN(x) || math.IsInf(x, 0)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if at, bad := unrenderable(x[k], p); bad {
				return at, true
			}
		}
	case []any:
		for i, e := range x {
			if at, bad := unrenderable(e, fmt.Sprintf("%s[%d]", path, i)); bad {
				return at, true
			}
		}
	}
	return "", false
}

func (a *app) printServer(g *gate.Gate, s *gate.Server, d getJSON) {
	w := a.env.Stdout
	disp := func(p string) string { return ops.Display(a.env.Home, g.View.Cwd, p) }
	fmt.Fprintf(w, "name:        %s\n", s.Name)
	if s.Reason == "" || s.Reason == s.State {
		fmt.Fprintf(w, "state:       %s\n", s.State) // not "ready (ready)"
	} else {
		fmt.Fprintf(w, "state:       %s (%s)\n", s.State, s.Reason)
	}
	if !s.Fix.IsZero() {
		fmt.Fprintf(w, "fix:         %s\n", a.fix(s.Fix))
	}
	fmt.Fprintf(w, "scope:       %s\n", s.Config.Scope)
	src := disp(s.Config.Source.File)
	if k := s.Config.Source.Kind; k != "" {
		src += " (" + k + ")"
	}
	fmt.Fprintf(w, "source:      %s\n", src)
	if !s.Config.AdapterLoads {
		fmt.Fprintf(w, "adapter:     does not load this entry (listed so it is gated)\n")
	}
	if s.Repository {
		fmt.Fprintf(w, "repository:  yes, %s\n", s.Config.RepositoryReason)
	} else {
		fmt.Fprintf(w, "repository:  no\n")
	}
	fmt.Fprintf(w, "transport:   %s\n", d.Transport)
	if len(s.Config.Contributions) > 1 {
		fmt.Fprintf(w, "defined in:\n")
		for _, c := range s.Config.Contributions {
			kind := ""
			if c.Kind != "" {
				kind = " (" + c.Kind + ")"
			}
			owner := "yours"
			if c.Repository {
				owner = "repository"
			}
			fmt.Fprintf(w, "  %s%s [%s, %s]\n", disp(c.File), kind, c.Scope, owner)
		}
	}
	fmt.Fprintf(w, "sandbox:     %s\n", d.Sandbox)
	if r := d.LastRun; r != nil {
		fmt.Fprintf(w, "last run:    %s\n", r.Text)
		fmt.Fprintf(w, "  fix:       %s\n", r.Fix)
	}
	if len(d.Grants.Read)+len(d.Grants.Write)+len(d.Grants.Net) > 0 {
		fmt.Fprintf(w, "grants:      read %s; write %s; network %s\n", listOr(d.Grants.Read), listOr(d.Grants.Write), listOr(d.Grants.Net))
	}
	if d.Definition != nil && d.Sandbox != "remote" {
		fmt.Fprintf(w, "environment: the sandbox's default set, plus %s (names; none of Pi's other keys)\n", listOr(d.Environment))
	}
	fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", indentJSON(d.Definition))
	a.printFlags(g, d.Flags)
	printTools(w, a.op().Tools(g, s), s.Name)
}

// printFlags lists what a person should look at before approving.
func (a *app) printFlags(g *gate.Gate, flags []flagJSON) {
	for _, f := range flags {
		where := ""
		if f.File != "" {
			where = ops.Display(a.env.Home, g.View.Cwd, f.File)
			if f.Line > 0 {
				where += fmt.Sprintf(":%d", f.Line)
			}
			where = " (" + where + ")"
		}
		fmt.Fprintf(a.env.Stdout, "warning: %s: %s%s\n", f.Key, f.Text, where)
	}
}

func indentJSON(v any) string {
	b, _ := json.MarshalIndent(v, "  ", "  ")
	return "  " + strings.TrimSpace(string(b))
}

// maxArgs is cobra.MaximumNArgs with a usage error naming the argument.
func maxArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %s (got %d arguments)", c.CommandPath(), names, len(args))
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with a usage error naming the argument.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d arguments)", c.CommandPath(), names, len(args))
		}
		return nil
	}
}
