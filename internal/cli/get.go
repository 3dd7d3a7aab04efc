package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/secret"
)

func init() { mcpSubcommands = append(mcpSubcommands, (*app).getCommand) }

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
}

func (a *app) getData(g *gate.Gate, s *gate.Server) getJSON {
	out := getJSON{serverJSON: a.serverRow(g, s), Definition: secret.Mask(s.Config.Entry), PinnedFiles: s.Pinned}
	if out.PinnedFiles == nil {
		out.PinnedFiles = []gate.PinnedFile{}
	}
	for _, c := range s.Config.Contributions {
		out.Contributions = append(out.Contributions, contributionJSON{Layer: c.Layer, Scope: c.Scope, File: c.File, Kind: c.Kind,
			RepositoryControlled: c.Repository, RepositoryReason: c.Reason, Entry: secret.Mask(c.Entry)})
	}
	if s.Repository {
		out.Owned = maskFragment(s.Fragment)
	}
	return out
}

// maskFragment masks a repository fragment: one entry, or {source, entry} parts.
func maskFragment(f any) any {
	switch x := f.(type) {
	case map[string]any:
		return secret.Mask(x)
	case []any:
		out := make([]any, len(x))
		for i, p := range x {
			part, _ := p.(map[string]any)
			e, _ := part["entry"].(map[string]any)
			out[i] = map[string]any{"source": part["source"], "entry": secret.Mask(e)}
		}
		return out
	}
	return f
}

func (a *app) getCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "get NAME",
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
		s, err := a.findServer(g, args[0])
		if err != nil {
			return err
		}
		d := a.getData(g, s)
		if *asJSON {
			return a.writeJSON(d)
		}
		a.printServer(g, s, d)
		return nil
	})
	return c
}

func (a *app) printServer(g *gate.Gate, s *gate.Server, d getJSON) {
	w := a.env.Stdout
	disp := func(p string) string { return display(a.env.Home, g.View.Cwd, p) }
	fmt.Fprintf(w, "name:        %s\n", s.Name)
	fmt.Fprintf(w, "state:       %s (%s)\n", s.State, s.Reason)
	if s.Fix != "" {
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
	fmt.Fprintf(w, "definition (merged: what will run):\n%s\n", indentJSON(d.Definition))
}

func indentJSON(v any) string {
	b, _ := json.MarshalIndent(v, "  ", "  ")
	return "  " + strings.TrimSpace(string(b))
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
