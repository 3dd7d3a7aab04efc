package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// manCommand is `piagent man DIR`: a man page (section 1, roff) for every
// command, written by hand from the command tree, so that `man piagent-mcp-
// approve` works once DIR is on MANPATH. cobra's own generator needs a
// Markdown library piagent does not otherwise carry.
func (a *app) manCommand() *cobra.Command {
	c := &cobra.Command{
		Use:     "man DIR",
		Short:   "Write a man page for every command into DIR (then: MANPATH=DIR: man piagent)",
		Example: "  piagent man ~/.local/share/man/man1",
		Args:    exactArgs(1, "DIR"),
	}
	c.RunE = run(func(c *cobra.Command, args []string) error {
		dir := args[0]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return refused(err)
		}
		n := 0
		for _, root := range []*cobra.Command{c.Root(), a.mcpCommand("piagent-mcp")} {
			var walk func(*cobra.Command) error
			walk = func(cmd *cobra.Command) error {
				if cmd.Hidden || cmd.Name() == "help" {
					return nil
				}
				if root == c.Root() && cmd.Name() == "mcp" {
					return nil // piagent-mcp's pages cover it
				}
				name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
				if err := os.WriteFile(filepath.Join(dir, name+".1"), manPage(cmd), 0o644); err != nil {
					return refused(err)
				}
				n++
				for _, sub := range cmd.Commands() {
					if err := walk(sub); err != nil {
						return err
					}
				}
				return nil
			}
			if err := walk(root); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.env.Stdout, "wrote %d man pages in %s\n", n, dir)
		return nil
	})
	return c
}

// manPage is one command's page.
func manPage(cmd *cobra.Command) []byte {
	var b bytes.Buffer
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"piagent %s\" \"piagent manual\"\n", roffEscape(strings.ToUpper(name)), Version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(cmd.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffEscape(cmd.UseLine()))
	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roffText(long))
	if cmd.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLES\n.nf\n%s\n.fi\n", roffEscape(cmd.Example))
	}
	var flags []*pflag.Flag
	cmd.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f)
		}
	})
	if len(flags) > 0 {
		b.WriteString(".SH OPTIONS\n")
		for _, f := range flags {
			head := "--" + f.Name
			if f.Shorthand != "" {
				head = "-" + f.Shorthand + ", " + head
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffEscape(head), roffText(f.Usage))
		}
	}
	var see []string
	if p := cmd.Parent(); p != nil {
		see = append(see, strings.ReplaceAll(p.CommandPath(), " ", "-")+"(1)")
	}
	for _, sub := range cmd.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			see = append(see, strings.ReplaceAll(sub.CommandPath(), " ", "-")+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", roffEscape(strings.Join(see, ", ")))
	}
	b.WriteString(".SH EXIT STATUS\n0 success, 1 needs attention or refused, 2 bad usage, 3 cancelled; see piagent help exit-codes.\n")
	return b.Bytes()
}

// roffEscape keeps text from being read as roff: backslashes doubled, a
// leading . or ' escaped.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffText is prose: paragraphs (blank lines) become .PP.
func roffText(s string) string {
	return strings.ReplaceAll(roffEscape(strings.TrimSpace(s)), "\n\n", "\n.PP\n")
}
