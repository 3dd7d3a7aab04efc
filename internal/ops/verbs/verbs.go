// Package verbs is the one table of piagent's commands: every verb, and
// whether running it only reads or records and changes decisions or
// configuration. The command line builds its command tree's annotations
// from it, the guard's shell reader derives which piagent command lines an
// agent may run, and the Pi extension's /piagent-mcp menu is held to it by
// a test. It is a leaf: the shell reader sits below everything the
// operations layer (internal/ops) uses.
package verbs

// Effect says what running a verb does.
type Effect string

const (
	// Reads only reads: an agent may run it.
	Reads Effect = "reads"
	// Changes records or changes a decision or configuration, or can
	// loosen the guard: only a person runs it.
	Changes Effect = "changes"
)

// Verb is one command.
type Verb struct {
	Name   string
	Effect Effect
	// Subs are the verb's own subcommands; a verb with none of its own
	// listed takes its effect for all of them.
	Subs []Verb
	// InPi: the Pi extension's /piagent-mcp offers it (mcp verbs).
	InPi bool
}

// MCP are the subcommands of `piagent mcp` (and of piagent-mcp).
var MCP = []Verb{
	{Name: "list", Effect: Reads, InPi: true},
	{Name: "get", Effect: Reads, InPi: true},
	{Name: "doctor", Effect: Reads, InPi: true},
	{Name: "notice", Effect: Reads, InPi: true},
	{Name: "approve", Effect: Changes, InPi: true},
	{Name: "reject", Effect: Changes, InPi: true},
	{Name: "reset", Effect: Changes, InPi: true},
	// in Pi, add prints the terminal command and writes nothing
	{Name: "add", Effect: Changes, InPi: true},
	{Name: "remove", Effect: Changes},
	{Name: "enable", Effect: Changes, InPi: true},
	{Name: "disable", Effect: Changes, InPi: true},
	{Name: "grant", Effect: Changes},
	{Name: "preset", Effect: Changes},
}

// Top are the commands beside `mcp`.
var Top = []Verb{
	{Name: "pi", Effect: Reads},
	{Name: "launch-config", Effect: Changes},
	{Name: "setup", Effect: Changes},
	{Name: "uninstall", Effect: Changes},
	{Name: "policy", Effect: Reads, Subs: []Verb{
		{Name: "show", Effect: Reads}, {Name: "check", Effect: Reads}, {Name: "redact", Effect: Reads},
		{Name: "mode", Effect: Changes}, // it can loosen the guard
	}},
	{Name: "guard", Effect: Reads, Subs: []Verb{{Name: "serve", Effect: Reads}}},
	{Name: "sandbox", Effect: Reads, Subs: []Verb{{Name: "exec", Effect: Reads}, {Name: "status", Effect: Reads}}},
	{Name: "extension", Effect: Reads, Subs: []Verb{{Name: "path", Effect: Reads}}},
	{Name: "version", Effect: Reads},
	{Name: "man", Effect: Changes},
	{Name: "quarantine", Effect: Changes},
}

// Help are the help topics, beside the commands at either level.
var Help = []Verb{{Name: "exit-codes", Effect: Reads}, {Name: "environment", Effect: Reads}}

// Of is the verb named name among vs.
func Of(vs []Verb, name string) (Verb, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return Verb{}, false
}
