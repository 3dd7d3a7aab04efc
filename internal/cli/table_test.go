package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/piagent/piagent/internal/gate"
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
// extension's SUBCOMMANDS) are the table's mcp subcommands, with the same
// split between those that change something and those that read; "status"
// is the extension's own.
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
	// Run from a terminal only: removing a server, granting it folders and
	// applying a preset are not offered inside Pi.
	terminalOnly := map[string]bool{"remove": true, "grant": true, "preset": true}
	a := &app{env: Env{}, name: "piagent-mcp"}
	for _, c := range a.mcpSubcommands() {
		changes, ok := menu[c.Name()]
		switch {
		case terminalOnly[c.Name()]:
			if ok {
				t.Errorf("/piagent-mcp %s: the test says terminal only; update it", c.Name())
			}
		case !ok:
			t.Errorf("/piagent-mcp has no %s", c.Name())
		case changes != (gateOf(c) == gateChanges) && c.Name() != "add":
			// add is the exception: in Pi it prints the terminal command and writes nothing.
			t.Errorf("/piagent-mcp %s: changes=%v, the table says %s", c.Name(), changes, gateOf(c))
		}
		delete(menu, c.Name())
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

// TestGuardKnowsOnlyCommands is TestCommandTableAgreesWithGuard's other
// direction: every word the guard's shell reader knows as a piagent
// subcommand (internal/shell/gate.go) is a command of the table, one of its
// subcommands, a help topic or cobra's own (help, completion), so that the
// reader's copy cannot keep a name the table dropped.
func TestGuardKnowsOnlyCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "shell", "gate.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	known := map[string]bool{"help": true, "completion": true}
	a := &app{env: Env{}, name: "piagent"}
	root := a.rootCommand()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			known[sub.Name()] = true
			walk(sub)
		}
	}
	walk(root)
	n := 0
	for _, name := range []string{"guardedSubcommands", "readOnlySubcommands"} {
		start := strings.Index(src, "var "+name+" = ")
		end := strings.Index(src[start:], "\n}\n")
		if start < 0 || end < 0 {
			t.Fatalf("%s not found in shell/gate.go", name)
		}
		for _, m := range regexp.MustCompile(`"([a-z-]+)":`).FindAllStringSubmatch(src[start:start+end], -1) {
			n++
			if !known[m[1]] {
				t.Errorf("the guard knows %q (shell/gate.go %s), which is no piagent command", m[1], name)
			}
		}
	}
	if n < 20 {
		t.Fatalf("read %d names from shell/gate.go", n)
	}
}
