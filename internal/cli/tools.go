package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/ops"
)

// printTools shows what changed, each changed or new tool's description
// with hidden characters made visible.
func printTools(w io.Writer, v ops.Tools, name string) {
	switch {
	case v.Err != "":
		fmt.Fprintf(w, "tools: cannot be compared: %s\n", v.Err)
		return
	case !v.Known:
		fmt.Fprintf(w, "tools: not known yet (the adapter has not listed %s's tools); they are pinned the first time piagent sees them\n", name)
		return
	case !v.Pinned && len(v.Concealed) == 0:
		fmt.Fprintf(w, "tools: %d, not pinned yet (pinned at the next tool call)\n", len(v.Seen.Tools))
		return
	case v.Pinned && v.Diff.Empty() && len(v.Concealed) == 0 && !v.Unseen:
		fmt.Fprintf(w, "tools: %d, as pinned\n", len(v.Seen.Tools))
		return
	case v.Diff.Empty() && len(v.Concealed) == 0:
		fmt.Fprintf(w, "tools: %d, seen for the first time; your policy asks you to look before the model may use them (firstSight: ask)\n", len(v.Seen.Tools))
		for _, n := range v.Seen.Names() {
			printTool(w, v, n)
		}
		return
	case v.Pinned && v.Diff.Empty():
		fmt.Fprintf(w, "tools: %d, pinned at first sight; what they hide waits for a person\n", len(v.Seen.Tools))
	case v.Pinned:
		fmt.Fprintf(w, "tools: changed since pinned: %s\n", v.Diff.String())
	}
	for _, c := range v.Concealed {
		fmt.Fprintf(w, "concealed: %s\n", c)
	}
	if v.Diff.Instructions || !v.Pinned && v.Instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", ops.Visible(v.Instructions))
	}
	for _, n := range v.Shown() {
		printTool(w, v, n)
		if schema, ok := v.Defs[n]["inputSchema"]; ok {
			b, _ := json.Marshal(schema)
			fmt.Fprintf(w, "    input: %s\n", ops.Visible(string(b)))
		}
	}
}

// printTool shows one tool and its description, hidden characters made
// visible.
func printTool(w io.Writer, v ops.Tools, name string) {
	fmt.Fprintf(w, "  tool %s: %s\n", ops.Visible(name), ops.Visible(v.Description(name)))
}

// preview shows, in an approval's preview, what the server offers the
// model as far as it is known, so that consent covers it at first sight too
// (issue 39, item 4): every tool with its description, hidden characters
// made visible; or that it is not known yet.
func previewTools(w io.Writer, v ops.Tools, name string) {
	switch {
	case v.Err != "":
		fmt.Fprintf(w, "tools: cannot be read: %s\n", v.Err)
		return
	case !v.Known:
		fmt.Fprintf(w, "tools: not known yet: pinned at first connection, shown in the notice\n")
		return
	}
	state := "not pinned yet: pinned as listed here when the session next reads them"
	switch {
	case v.Pinned && !v.Diff.Empty():
		state = "changed since pinned: " + v.Diff.String()
	case v.Pinned:
		state = "as pinned"
	}
	fmt.Fprintf(w, "tools (%d, %s):\n", len(v.Seen.Tools), state)
	for _, n := range v.Seen.Names() {
		printTool(w, v, n)
	}
	for _, c := range v.Concealed {
		fmt.Fprintf(w, "concealed: %s\n", c)
	}
	if v.Instructions != "" {
		fmt.Fprintf(w, "  instructions: %s\n", ops.Visible(v.Instructions))
	}
}

// approveTools records what a server offers now as its catalogue pin, after
// showing how it differs from the last one: the adapter's cache, and what
// Pi's built-in client last reported.
// With dryRun it records nothing; with asJSON the answer is previewJSON,
// the words it shows inside it.
func (a *app) approveTools(g *gate.Gate, name string, yes, dryRun, asJSON bool) error {
	if _, err := ops.Server(g, name); err != nil {
		return err
	}
	var text strings.Builder
	w := a.env.Stdout
	if asJSON {
		w = &text
	}
	ch, err := a.op().ToolsChangeOf(g, name)
	s := ch.Server
	printTools(w, ch.Tools, s.Name)
	if ch.Reported {
		fmt.Fprintf(w, "tools as Pi's built-in client listed them: changed since pinned: %s\n", ch.ReportedDiff.String())
	}
	if err != nil {
		return err
	}
	answer := func(accepted bool) error {
		if !asJSON {
			return nil
		}
		return a.writeJSON(previewJSON{Action: "approve-tools", Server: s.Name, Project: g.Project, State: s.State,
			DryRun: dryRun, Waiting: ch.Waiting(), Accepted: accepted, Preview: text.String()})
	}
	switch {
	case !ch.Waiting():
		fmt.Fprintf(w, "%s's tools are as pinned; no change\n", s.Name)
		return answer(false)
	case dryRun:
		return answer(false)
	}
	if err := a.askConsent(yes, "accepted", "the tools", "approve "+s.Name+" --tools --yes",
		fmt.Sprintf("Accept the tools of %s as shown? [y/N] ", s.Name), fmt.Errorf("not accepted: the changed tools of %s stay blocked", s.Name)); err != nil {
		return err
	}
	if err := a.op().AcceptTools(g, ch); err != nil {
		return err
	}
	fmt.Fprintf(w, "accepted the tools of %s as they are now\n", s.Name)
	return answer(true)
}
