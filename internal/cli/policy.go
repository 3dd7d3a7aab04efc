package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops"
)

// exitConfirm is policy check's status for a call that needs a person.
const exitConfirm = 3

func (a *app) policyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "policy",
		Short: "The tool policy: show it, check a tool call against it, redact a result, choose the mode",
		Args:  cobra.NoArgs,
	}
	c.PersistentFlags().String("project", "", "the project directory (default: the working directory)")
	c.AddCommand(a.policyShow(), a.policyCheck(), a.policyRedact(), a.policyMode())
	return c
}

func (a *app) policyShow() *cobra.Command {
	c := &cobra.Command{Use: "show", Short: "Print the effective policy and where each part came from", Args: cobra.NoArgs}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		out, showErr := a.op().ShowPolicy(dir)
		if out == nil {
			return showErr
		}
		if *asJSON {
			if err := a.writeJSON(out); err != nil {
				return err
			}
		} else {
			a.printer().Policy(out)
		}
		return showErr
	})
	return c
}

// readCall reads one {"toolName", "input"} object from stdin.
func (a *app) readCall(v any) error {
	data, err := io.ReadAll(io.LimitReader(a.env.Stdin, 32<<20))
	if err != nil {
		return usagef("reading stdin: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(v); err != nil {
		return usageErr(fmt.Errorf("stdin is not a JSON tool call: %v", err), `pipe {"toolName": "read", "input": {"path": "x"}}`)
	}
	return nil
}

func (a *app) policyCheck() *cobra.Command {
	c := &cobra.Command{
		Use:     "check",
		Example: `  echo '{"toolName":"bash","input":{"command":"git push"}}' | piagent policy check`,
		Short:   `Decide a tool call read as JSON on stdin ({"toolName": …, "input": …}); exit 0 allow, 1 block, 3 confirm, 2 bad input`,
		Args:    cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print JSON")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		var call ops.Call
		if err := a.readCall(&call); err != nil {
			return err
		}
		if call.ToolName == "" {
			return usagef("the tool call has no toolName")
		}
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		// the same decision engine the Pi extension asks
		d := a.op().Engine(dir).Check(call)
		if err := a.printCallDecision(d, *asJSON); err != nil {
			return err
		}
		switch d.Action {
		case ops.Block:
			return attention()
		case ops.Confirm:
			return &cliError{code: exitConfirm, err: errors.New("needs confirmation"), quiet: true}
		}
		return nil
	})
	return c
}

// printCallDecision says what policy check decided of a tool call.
func (a *app) printCallDecision(d ops.CallDecision, asJSON bool) error {
	if asJSON {
		// The fix in words, for the command line (the helper protocol
		// carries it as data).
		out := struct {
			ops.CallDecision
			Fix string `json:"fix,omitempty"`
		}{CallDecision: d}
		if d.Fix != nil {
			out.Fix = d.Fix.String()
		}
		return a.writeJSON(out)
	}
	a.printer().CallDecision(d)
	return nil
}

func (a *app) policyRedact() *cobra.Command {
	c := &cobra.Command{
		Use:     "redact",
		Example: `  echo '{"toolName":"read","input":{"path":".env"},"content":"TOKEN=abc"}' | piagent policy redact`,
		Short:   `Redact a tool result read as JSON on stdin ({"toolName", "input", "content"}); prints the content in the same shape`,
		Args:    cobra.NoArgs,
	}
	asJSON := c.Flags().Bool("json", false, "print the content wrapped with what was removed")
	c.RunE = run(func(c *cobra.Command, _ []string) error {
		var in struct {
			ToolName string          `json:"toolName"`
			Input    map[string]any  `json:"input"`
			Content  json.RawMessage `json:"content"`
		}
		if err := a.readCall(&in); err != nil {
			return err
		}
		if len(in.Content) == 0 {
			return usagef("the tool result has no content")
		}
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		// the same decision engine the Pi extension asks
		s := a.op().Engine(dir)
		out, err := s.Redact(in.ToolName, in.Input, in.Content)
		if err != nil {
			return usageErr(err)
		}
		if *asJSON {
			return a.writeJSON(out)
		}
		if str, ok := out.Content.(string); ok {
			fmt.Fprint(a.env.Stdout, str)
			if !strings.HasSuffix(str, "\n") {
				fmt.Fprintln(a.env.Stdout)
			}
			return nil
		}
		return a.writeJSON(out.Content)
	})
	return c
}

func (a *app) policyMode() *cobra.Command {
	c := &cobra.Command{
		Use: "mode [MODE]",
		Example: `  piagent policy mode
  piagent policy mode readOnly
  piagent policy mode --clear`,
		Short:     "Show or choose this project's mode (" + strings.Join(ops.Modes, ", ") + "); stored under ~/.pi, never in the repository",
		Args:      maxArgs(1, "one MODE"),
		ValidArgs: ops.Modes,
	}
	forget := c.Flags().Bool("clear", false, "forget this project's choice (the policy's default applies)")
	c.RunE = run(func(c *cobra.Command, args []string) error {
		dir, err := a.projectDir(c)
		if err != nil {
			return err
		}
		mode := ""
		if len(args) == 1 {
			mode = args[0]
		}
		choice, err := a.op().SetMode(dir, len(args) == 1 || *forget, mode)
		if err != nil {
			return err
		}
		if choice.Mode == "" {
			fmt.Fprintf(a.env.Stdout, "mode: %s (the policy's default)\n", choice.Default)
		} else {
			fmt.Fprintf(a.env.Stdout, "mode: %s (chosen for %s in %s)\n", choice.Mode, choice.Project, choice.Store)
		}
		return nil
	})
	return c
}
