// Package guard answers, before each agent tool call, "may this run?". One
// Decide covers every tool surface pi-mcp-adapter offers (the mcp proxy in
// all its modes, mcp__<ns> namespace proxies, direct tools under every prefix
// mode, mcpScript, install and auth actions), the full-block states, and the
// gate's protection of itself. It is pure: a Snapshot holds everything it
// needs, built once per gate state.
package guard

import (
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/policy"
)

// Actions a Decision can carry.
const (
	Allow   = "allow"
	Block   = "block"
	Confirm = "confirm"
	Warn    = "warn"
)

// Stable reason codes.
const (
	CodeOK         = "ok"
	CodeFullBlock  = "full-block"
	CodeServer     = "server-not-approved" // the server's state stops the call
	CodeAmbiguous  = "ambiguous-tool"      // two servers could own the name and one is not approved
	CodeInstall    = "mcp-install"         // mcp({action:"install"}) would plant a server
	CodeScript     = "mcp-script"          // mcpScript while a server is unapproved
	CodeUnknownMCP = "unknown-mcp-tool"    // an adapter tool whose server cannot be told
	CodeCatalogue  = "catalogue-changed"   // the server's tools changed since pinned, or hide content
	CodeSelf       = policy.CodeSelf       // the call would make or change a decision or configuration
	CodeShellParse = policy.CodeSelfParse  // a shell command that cannot be parsed
)

// Call is one tool call as Pi's tool_call event carries it.
type Call struct {
	ToolName string         `json:"toolName"`
	Input    map[string]any `json:"input"`
	// SourcePath is the tool's sourceInfo.path when Pi knows it; every tool
	// of the adapter carries the adapter's index.ts path.
	SourcePath string `json:"sourcePath,omitempty"`
}

// Decision is the answer. Reason is meant for the person: it names the
// server, state and the command that fixes it, and never a secret.
type Decision struct {
	Action string `json:"action"`
	Code   string `json:"code"`
	Reason string `json:"reason,omitempty"`
	Server string `json:"server,omitempty"`
	State  string `json:"state,omitempty"`
	// Fix is what lets the call through, as data (the piagent-mcp steps a
	// person runs); the Pi extension words it as its slash command. nil:
	// none. It may point into the gate's own state: read it, never change
	// it (a pointer keeps a decision as small as one string was).
	Fix *gate.Fix `json:"fix,omitempty"`
	// A Decision is returned by value on every call: this keeps it at the
	// 128 bytes it had when the fix was a string. At 120 it cost 9 ns more
	// a call (BenchmarkDecideNonMCP, 23 → 33 ns, as the copy takes another
	// path); at 128, nothing.
	_ [8]byte
	// Rule and Subject come from the tool policy: the rule that fired and the
	// path or command that triggered it (never a secret value).
	Rule    string `json:"rule,omitempty"`
	Subject string `json:"subject,omitempty"`
}

var allow = Decision{Action: Allow, Code: CodeOK}

// Allowed reports whether the call may run without asking anyone.
func (d Decision) Allowed() bool { return d.Action == Allow || d.Action == Warn }
