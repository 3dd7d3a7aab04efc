package render

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/piagent/piagent/internal/ops"
)

// Tools shows what changed, each changed or new tool's description
// with hidden characters made visible.
func Tools(w io.Writer, v ops.Tools, name string) {
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

// PreviewTools shows, in an approval's preview, what the server offers the
// model as far as it is known, so that consent covers it at first sight too
// (issue 39, item 4): every tool with its description, hidden characters
// made visible; or that it is not known yet.
func PreviewTools(w io.Writer, v ops.Tools, name string) {
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

// ToolsChange shows what approve --tools would accept: how what the server
// offers differs from its pin, and how what Pi's built-in client listed
// does.
func ToolsChange(w io.Writer, ch ops.ToolsChange) {
	Tools(w, ch.Tools, ch.Server.Name)
	if ch.Reported {
		fmt.Fprintf(w, "tools as Pi's built-in client listed them: changed since pinned: %s\n", ch.ReportedDiff.String())
	}
}
