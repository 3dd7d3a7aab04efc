package ops

import (
	"iter"
	"strings"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/jsonc"
)

// Row is one server as list shows it, and one row of `list --json`. The
// field set is a contract (pinned by TestListJSONFields): fields may be
// added, never renamed.
type Row struct {
	Name                 string   `json:"name"`
	Scope                string   `json:"scope"`
	Layer                string   `json:"layer"`
	State                string   `json:"state"`
	Reason               string   `json:"reason"`
	Fix                  string   `json:"fix,omitempty"`
	Transport            string   `json:"transport"`
	Target               string   `json:"target"`
	Source               Source   `json:"source"`
	RepositoryControlled bool     `json:"repositoryControlled"`
	RepositoryReason     string   `json:"repositoryReason,omitempty"`
	AdapterLoads         bool     `json:"adapterLoads"`
	Digest               string   `json:"digest,omitempty"`
	MissingEnv           []string `json:"missingEnv,omitempty"`
	MissingCommand       string   `json:"missingCommand,omitempty"`
	// Hints name what a ready server still needs that piagent can look
	// for but that does not change its state (a browser, say).
	Hints []string `json:"hints,omitempty"`
	// Repository: the repository declares the server (its decisions are
	// approve's and reject's). Blocking: its state stops tool calls.
	Repository bool `json:"-"`
	Blocking   bool `json:"-"`
}

// FullBlock is a full-block state: every tool call is blocked. Its fix is
// worded for the command the person typed.
type FullBlock struct {
	Code   string   `json:"code"`
	Reason string   `json:"reason"`
	Files  []string `json:"files"`
	Fix    string   `json:"fix"`
}

// List is list's answer (and `list --json`): the project's servers, then
// what was skipped and what blocks every tool call.
type List struct {
	Project  string `json:"project"`
	Servers  []Row  `json:"servers"`
	ListTail        // after the servers, so that the edge can stream them
	// Cwd is the folder the project's files are read from; Ignored are
	// entries of the files read that were left out (shown as warnings).
	Cwd     string    `json:"-"`
	Ignored []Skipped `json:"-"`
}

// ListTail is List after its servers.
type ListTail struct {
	Skipped    []Skipped   `json:"skipped"`
	Blocks     []FullBlock `json:"blocks"`
	FullBlock  bool        `json:"fullBlock"`
	Exclusive  bool        `json:"exclusive"`
	StoreError string      `json:"storeError,omitempty"`
}

// Server states, as a person reads them (gate's).
const (
	Ready           = gate.Ready
	Disabled        = gate.Disabled
	Rejected        = gate.Rejected
	PendingApproval = gate.PendingApproval
)

// Row is s as list shows it, its fix worded for prog.
func (o *Ops) Row(s *gate.Server, prog string) Row {
	cs := s.Config
	return Row{
		Name: s.Name, Scope: cs.Scope, Layer: cs.Layer, State: s.State, Reason: s.Reason, Fix: s.Fix.Render(prog),
		Transport: Transport(cs.Entry), Target: Target(cs.Entry), Source: cs.Source,
		RepositoryControlled: cs.RepositoryControlled, RepositoryReason: cs.RepositoryReason,
		AdapterLoads: cs.AdapterLoads, Digest: s.Digest, MissingEnv: s.MissingEnv, MissingCommand: s.Command,
		Hints: o.ServerHints(s), Repository: s.Repository, Blocking: gate.Blocks(s.State),
	}
}

// List is g as list shows it, fixes worded for prog; with headerOnly
// its servers are left out (the edge streams them with Rows).
func (o *Ops) List(g *gate.Gate, prog string, headerOnly bool) List {
	out := List{Project: g.Project, Servers: []Row{}, ListTail: ListTail{Skipped: g.View.Skipped, Blocks: []FullBlock{},
		FullBlock: g.FullBlock(), Exclusive: g.View.Exclusive}, Cwd: g.View.Cwd, Ignored: g.View.Ignored}
	if out.Skipped == nil {
		out.Skipped = []Skipped{}
	}
	for _, b := range g.Blocks {
		out.Blocks = append(out.Blocks, FullBlock{Code: b.Code, Reason: b.Reason, Files: b.Files, Fix: b.Fix.Render(prog)})
	}
	if g.StoreErr != nil {
		out.StoreError = g.StoreErr.Error()
	}
	if !headerOnly {
		for r := range o.Rows(g, prog) {
			out.Servers = append(out.Servers, r)
		}
	}
	return out
}

// Rows are g's servers as list shows them, one at a time: 10,000 servers
// need never be one document in memory.
func (o *Ops) Rows(g *gate.Gate, prog string) iter.Seq[Row] {
	return func(yield func(Row) bool) {
		for i := range g.Servers {
			if !yield(o.Row(&g.Servers[i], prog)) {
				return
			}
		}
	}
}

// AppendJSON appends r as the edge's --json lays out a Row in list's
// servers array, the row's { already placed: fields four spaces in, its }
// two. It is encoding/json's encoding written by hand, field by field in
// the struct's order with its omitempty rules (FuzzAppendRow holds it to
// encoding/json), because reflection and a second pass to lay it out were
// a fifth of list's time at 1,000 servers.
func (r *Row) AppendJSON(b []byte) []byte {
	const field = ",\n      \""
	b = append(b, "{\n      \"name\": "...)
	b = jsonc.AppendString(b, r.Name)
	b = appendStringField(b, field+"scope\": ", r.Scope)
	b = appendStringField(b, field+"layer\": ", r.Layer)
	b = appendStringField(b, field+"state\": ", r.State)
	b = appendStringField(b, field+"reason\": ", r.Reason)
	if r.Fix != "" {
		b = appendStringField(b, field+"fix\": ", r.Fix)
	}
	b = appendStringField(b, field+"transport\": ", r.Transport)
	b = appendStringField(b, field+"target\": ", r.Target)
	b = appendStringField(b, field+"source\": {\n        \"file\": ", r.Source.File)
	if r.Source.Kind != "" {
		b = appendStringField(b, ",\n        \"kind\": ", r.Source.Kind)
	}
	b = append(b, "\n      }"...)
	b = appendBoolField(b, field+"repositoryControlled\": ", r.RepositoryControlled)
	if r.RepositoryReason != "" {
		b = appendStringField(b, field+"repositoryReason\": ", r.RepositoryReason)
	}
	b = appendBoolField(b, field+"adapterLoads\": ", r.AdapterLoads)
	if r.Digest != "" {
		b = appendStringField(b, field+"digest\": ", r.Digest)
	}
	if len(r.MissingEnv) > 0 {
		b = appendStrings(b, field+"missingEnv\": [", r.MissingEnv)
	}
	if r.MissingCommand != "" {
		b = appendStringField(b, field+"missingCommand\": ", r.MissingCommand)
	}
	if len(r.Hints) > 0 {
		b = appendStrings(b, field+"hints\": [", r.Hints)
	}
	return append(b, "\n    }"...)
}

func appendStringField(b []byte, key, v string) []byte {
	return jsonc.AppendString(append(b, key...), v)
}

func appendBoolField(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendStrings appends a non-empty array of strings, one a line, after
// key (which ends in its [).
func appendStrings(b []byte, key string, vs []string) []byte {
	b = append(b, key...)
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		b = jsonc.AppendString(b, v)
	}
	return append(b, "\n      ]"...)
}

// Candidates are the names and states of g's servers that start with
// prefix and that keep takes (nil: every one), each once: what a shell
// completes.
func Candidates(g *gate.Gate, prefix string, keep func(state string, repository bool) bool) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for i := range g.Servers {
		s := &g.Servers[i]
		if strings.HasPrefix(s.Name, prefix) && (keep == nil || keep(s.State, s.Repository)) && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, [2]string{s.Name, s.State})
		}
	}
	return out
}

// GateAt computes the gate for the project a command names: project
// (--project), or the working directory when it is empty (ProjectDir).
func (o *Ops) GateAt(project string) (*gate.Gate, error) {
	dir, err := o.ProjectDir(project)
	if err != nil {
		return nil, err
	}
	return o.Gate(dir)
}

// Detail is get's answer (and get --json): the server's list row, its
// definition for a person to read (View), and how its last confined run
// ended.
type Detail struct {
	Row
	View
	// LastRun is how the server's last confined run ended, when it failed:
	// the sandbox may have stopped it (Fix names the grant).
	LastRun *LastRun `json:"lastRun,omitempty"`
	// Cwd is the folder the project's files are read from; Pinned what
	// consent pins with the definition, and the folders pinned whole.
	Cwd         string       `json:"-"`
	PinnedTrees []PinnedTree `json:"-"`
}

// Detail is s's definition for a person to read, with its list row and
// its last failed run, fixes worded for prog.
func (o *Ops) Detail(g *gate.Gate, s *gate.Server, prog string) Detail {
	out := Detail{Row: o.Row(s, prog), View: o.View(g, s), Cwd: g.View.Cwd, PinnedTrees: PinnedTrees(s.Pinned)}
	if lr, ok := o.LastRun(g.Project, s.Name, prog); ok {
		out.LastRun = &lr
	}
	return out
}

// Doctor is doctor's answer (and doctor --json): the list, then doctor's
// findings.
type Doctor struct {
	List
	Findings
	// ExclusiveFile is the one file read under PI_MCP_CONFIG_MODE=exclusive.
	ExclusiveFile string `json:"-"`
}

// Doctor is doctor's account of g, fixes worded for opt.Prog.
func (o *Ops) Doctor(g *gate.Gate, opt DiagnoseOptions) Doctor {
	return Doctor{List: o.List(g, opt.Prog, false), Findings: o.Diagnose(g, opt), ExclusiveFile: ExclusiveFile(g)}
}
