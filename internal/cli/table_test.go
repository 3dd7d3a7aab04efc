package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/ops/verbs"
	"github.com/piagent/piagent/internal/shell"
	"github.com/spf13/cobra"
)

// TestCommandTableAgreesWithGuard: the command table is the one list of
// piagent's commands, and the guard's shell reader must agree with it. Every
// command that records or changes decisions or configuration (annotated
// "changes") is blocked by gate-self when an agent's bash line runs it, under
// either program name; every command that only reads runs. A command added
// to the table without the reader knowing it is blocked (the reader fails
// closed), and this test names it.
func TestCommandTableAgreesWithGuard(t *testing.T) {
	ctx := shell.Context{Home: "/home/u", Cwd: "/home/u/p", ProjectRoot: "/home/u/p"}
	seen := map[string]bool{}
	for _, name := range []string{"piagent", "piagent-mcp"} {
		a := &app{env: Env{}, name: name}
		root := a.mcpCommand("piagent-mcp")
		if name == "piagent" {
			root = a.rootCommand()
		}
		root.InitDefaultHelpCmd()
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			for _, sub := range c.Commands() {
				walk(sub)
			}
			if c == root || c.Name() == "help" {
				return
			}
			gate := gateOf(c)
			if gate != gateChanges && gate != gateReads {
				t.Errorf("%s: no gate annotation in the command table", c.CommandPath())
				return
			}
			line := c.CommandPath()
			if !c.HasSubCommands() {
				line += " x"
			}
			seen[gate] = true
			an, err := shell.Parse(line)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			blocked := len(shell.GateSelf(an, ctx)) > 0
			switch {
			case gate == gateChanges && !blocked:
				t.Errorf("%q changes decisions or configuration, but the guard lets an agent run it", line)
			case gate == gateReads && blocked:
				t.Errorf("%q only reads, but the guard blocks it: %v", line, shell.GateSelf(an, ctx))
			}
		}
		walk(root)
	}
	if !seen[gateChanges] || !seen[gateReads] {
		t.Fatalf("the walk missed a kind: %v", seen)
	}
}

// TestExtensionMenuAgreesWithTable: /piagent-mcp's subcommands (the
// extension's SUBCOMMANDS) are the table's mcp verbs it offers in Pi
// (verbs.MCP, InPi), with the same split between those that change
// something and those that read; "status" is the extension's own.
func TestExtensionMenuAgreesWithTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "extensions", "pi", "command.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	start := strings.Index(src, "export const SUBCOMMANDS")
	end := strings.Index(src[start:], "\n];")
	if start < 0 || end < 0 {
		t.Fatal("SUBCOMMANDS not found in command.ts")
	}
	menu := map[string]bool{} // name → changes
	for _, obj := range strings.Split(src[start:start+end], "name: ")[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(obj, `"`), `"`)
		menu[name] = strings.Contains(obj, "changes: true")
	}
	if len(menu) < 5 {
		t.Fatalf("read %d subcommands from command.ts: %v", len(menu), menu)
	}
	// Run from a terminal only (InPi false): removing a server, granting it
	// folders and applying a preset are not offered inside Pi.
	for _, v := range verbs.MCP {
		changes, ok := menu[v.Name]
		switch {
		case !v.InPi:
			if ok {
				t.Errorf("/piagent-mcp %s: the table says terminal only (verbs.MCP InPi); update one of them", v.Name)
			}
		case !ok:
			t.Errorf("/piagent-mcp has no %s", v.Name)
		case changes != (v.Effect == verbs.Changes) && v.Name != "add":
			// add is the exception: in Pi it prints the terminal command and writes nothing.
			t.Errorf("/piagent-mcp %s: changes=%v, the table says %s", v.Name, changes, v.Effect)
		}
		delete(menu, v.Name)
	}
	delete(menu, "status")
	for name := range menu {
		t.Errorf("/piagent-mcp %s is not a piagent-mcp subcommand", name)
	}
}

// gateOf is a command's gate annotation, or its nearest parent's.
func gateOf(c *cobra.Command) string {
	for ; c != nil; c = c.Parent() {
		if v := c.Annotations[gateKey]; v != "" {
			return v
		}
	}
	return ""
}

// TestActionsAreSubcommands: the subcommands a server's state offers
// (gate.Server.Actions, the extension's menu per server) are mcp
// subcommands of the table, each one the extension's menu has.
func TestActionsAreSubcommands(t *testing.T) {
	a := &app{env: Env{}, name: "piagent-mcp"}
	table := map[string]bool{}
	for _, c := range a.mcpSubcommands() {
		table[c.Name()] = true
	}
	seen := map[string]bool{}
	for _, state := range []string{gate.Disabled, gate.Rejected, gate.ApprovalChanged, gate.PendingApproval,
		gate.NeedsCommand, gate.NeedsEnv, gate.OAuth, gate.Ready} {
		for _, repo := range []bool{false, true} {
			s := gate.Server{State: state, Repository: repo}
			for _, act := range s.Actions() {
				seen[act] = true
				if !table[act] {
					t.Errorf("a %s server (repository %v) offers %q, which is no mcp subcommand", state, repo, act)
				}
			}
		}
	}
	if len(seen) < 6 {
		t.Errorf("the states offer only %v", seen)
	}
}

// TestTableIsTheTree: the table of verbs (internal/ops/verbs) and the
// command tree are the same commands at the same levels, so that the
// guard's shell reader, which derives its lists from the table, cannot know
// a name the tree dropped or miss one it added.
func TestTableIsTheTree(t *testing.T) {
	a := &app{env: Env{}, name: "piagent"}
	root := a.rootCommand()
	names := func(cs []*cobra.Command) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name())
		}
		sort.Strings(out)
		return out
	}
	table := func(vss ...[]verbs.Verb) []string {
		var out []string
		for _, vs := range vss {
			for _, v := range vs {
				out = append(out, v.Name)
			}
		}
		sort.Strings(out)
		return out
	}
	var top, mcp *cobra.Command = root, nil
	for _, c := range root.Commands() {
		if c.Name() == "mcp" {
			mcp = c
		}
	}
	var topOnly []*cobra.Command
	for _, c := range top.Commands() {
		if c.Name() != "mcp" {
			topOnly = append(topOnly, c)
		}
	}
	if diff := cmp.Diff(table(verbs.Top, verbs.Help), names(topOnly)); diff != "" {
		t.Errorf("top-level commands (-table +tree):\n%s", diff)
	}
	var mcpSubs []*cobra.Command
	for _, c := range mcp.Commands() {
		if _, help := verbs.Of(verbs.Help, c.Name()); !help {
			mcpSubs = append(mcpSubs, c)
		}
	}
	if diff := cmp.Diff(table(verbs.MCP), names(mcpSubs)); diff != "" {
		t.Errorf("mcp subcommands (-table +tree):\n%s", diff)
	}
	for _, v := range verbs.Top {
		if len(v.Subs) == 0 {
			continue
		}
		for _, c := range topOnly {
			if c.Name() == v.Name {
				if diff := cmp.Diff(table(v.Subs), names(c.Commands())); diff != "" {
					t.Errorf("%s's subcommands (-table +tree):\n%s", v.Name, diff)
				}
			}
		}
	}
}
