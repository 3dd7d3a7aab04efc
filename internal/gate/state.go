// Package gate decides, for one home and one project, which MCP servers may
// be used: the approval state of every server, the full-block states that stop
// every tool call, and the warnings doctor shows. Compute is the one place
// these are decided; the CLI, the guard and the Pi extension all read its
// result. Cache keeps a computed Gate until any file it read changes.
package gate

import (
	"github.com/piagent/piagent/internal/mcpconfig"
	"sync/atomic"
)

// Server states, in the precedence the seeds give: the first that applies wins.
const (
	Disabled        = "disabled"
	Rejected        = "rejected"
	ApprovalChanged = "approval-changed"
	PendingApproval = "pending-approval"
	NeedsCommand    = "needs-command"
	NeedsEnv        = "needs-env"
	OAuth           = "oauth"
	Ready           = "ready"
)

// Blocks reports whether a state stops a tool call. needs-env, needs-command
// and oauth are setup hints: the call fails or signs in on its own.
func Blocks(state string) bool {
	switch state {
	case Disabled, Rejected, ApprovalChanged, PendingApproval:
		return true
	}
	return false
}

// Full-block codes.
const (
	BlockDirectToolsNoPrefix = "direct-tools-no-prefix"
	BlockUnreadableImport    = "unreadable-repository-import"
	// BlockUnreadableLayer: a configuration file the adapter reads and
	// piagent cannot.
	BlockUnreadableLayer = "unreadable-layer"
)

// Block is a full-block state: every tool call is stopped while it holds.
type Block struct {
	Code   string   `json:"code"`
	Reason string   `json:"reason"`
	Files  []string `json:"files"` // every file that contributed; fixing any one is enough
	Fix    Fix      `json:"fix"`
}

// PinnedFile is a project file a definition runs, pinned by content.
type PinnedFile struct {
	Path     string `json:"path"`               // project-relative, slash-separated
	Digest   string `json:"digest"`             // now; "" when the file is gone
	Recorded string `json:"recorded,omitempty"` // in the decision; "" when not recorded
	// Tree, on the first pinned file of a whole-tree pin, is the folder
	// (project-relative) whose every file is pinned: any change there asks
	// again.
	Tree string `json:"tree,omitempty"`
}

// Changed reports whether the file differs from what was approved.
func (p PinnedFile) Changed() bool { return p.Digest != p.Recorded }

// Server is one server's state.
type Server struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Reason string `json:"reason"`
	Fix    Fix    `json:"fix,omitzero"` // what moves it on, if anything
	// Repository-owned part, for repository-controlled servers only.
	Repository bool `json:"repositoryControlled"`
	// LocalCode, for a server of the user's own files, names the project
	// file its runner takes in place of the registry package (npx's
	// node_modules/.bin lookup): the project then decides what runs, and
	// the server is judged as a repository server.
	LocalCode  string       `json:"localCode,omitempty"`
	Digest     string       `json:"digest,omitempty"`
	Fragment   any          `json:"-"`
	Pinned     []PinnedFile `json:"pinnedFiles,omitempty"`
	MissingEnv []string     `json:"missingEnv,omitempty"`
	Command    string       `json:"missingCommand,omitempty"`
	// DirectTools and Prefix are the server's effective tool surface.
	DirectTools bool              `json:"directTools"`
	Prefix      string            `json:"toolPrefix"`
	Config      *mcpconfig.Server `json:"-"`
	// pins is how Pinned compared with the approval's record, kept so a
	// refresh after an edit compares only the files digested again.
	pins pinCheck
}

// pinCheck is a server's pinned files against its approval's record.
type pinCheck struct {
	made     bool  // compared: an approval of this definition, with its files
	changed  []int // indices in Pinned of the files that differ, ascending
	recorded int   // pinned files the record names
	files    int   // files the record names
}

// Warning is something doctor shows that does not change the exit status.
type Warning struct {
	Code   string `json:"code"`
	Server string `json:"server,omitempty"`
	File   string `json:"file,omitempty"`
	Text   string `json:"text"`
}

// Gate is the computed state for one home and project.
type Gate struct {
	Project  string // the project key: the working directory's real path
	View     *mcpconfig.View
	Servers  []Server // same order as View.Servers
	Blocks   []Block
	Warnings []Warning
	// StoreErr is set when the approval store exists but cannot be used;
	// every repository server then reads as undecided.
	StoreErr error
	// Signature validates a cached Gate: every path it read.
	Signature Signature
	// TreePins are the folders some server's approval pins whole; their
	// folders join the signature, so a new file there is seen.
	TreePins []string

	input *Input          // what computed it (cached gates): for afterEdits
	index map[string]int  // Signature's index by path, made by afterEdits
	ways  map[string]bool // Signature's paths and every folder above them (onTheWay)
	// consulted are the paths judging the servers asked about (snapFS),
	// present or missing: the signature holds them
	consulted []string
	// id names a cached gate; from is the id of the one afterEdits
	// refreshed into this one (an id, not a pointer: a chain of pointers
	// would keep every refreshed gate alive)
	id, from uint64
}

// ids numbers cached gates.
var ids atomic.Uint64

// Refreshes reports whether g is prev with only pinned files' digests
// digested again (Gate.afterEdits): every file but those read the same, so
// what a caller derived from prev's other inputs (the policy, the mode,
// the adapter's cache, the registry) still holds for g; the servers'
// states may differ.
func (g *Gate) Refreshes(prev *Gate) bool { return prev != nil && prev.id != 0 && g.from == prev.id }

// Server returns the state of the named server (the adapter-loaded one first).
func (g *Gate) Server(name string) (*Server, bool) {
	var fallback *Server
	for i := range g.Servers {
		s := &g.Servers[i]
		if s.Name != name {
			continue
		}
		if s.Config == nil || s.Config.AdapterLoads {
			return s, true
		}
		if fallback == nil {
			fallback = s
		}
	}
	return fallback, fallback != nil
}

// FullBlock reports whether every tool call is stopped.
func (g *Gate) FullBlock() bool { return len(g.Blocks) > 0 }

// NeedsAttention reports what doctor's exit status says: a full block, a
// repository server awaiting a decision, or a missing command or variable.
func (g *Gate) NeedsAttention() bool {
	if g.FullBlock() {
		return true
	}
	for _, s := range g.Servers {
		switch s.State {
		case PendingApproval, ApprovalChanged, NeedsCommand, NeedsEnv:
			return true
		}
	}
	return false
}

// Actions are the piagent-mcp subcommands that apply to the server in its
// state, in menu order: what /piagent-mcp offers for it. The state order
// lives here alone; the extension reads the list from the helper's state.
func (s *Server) Actions() []string {
	out := []string{"get"}
	if s.Repository {
		switch s.State {
		case PendingApproval, ApprovalChanged, Rejected:
			out = append(out, "approve")
		}
		if s.State != Rejected {
			out = append(out, "reject")
		}
		// Past pending-approval a repository server carries a decision
		// (rejected and approval-changed come before the setup states).
		if s.State != PendingApproval && s.State != Disabled {
			out = append(out, "reset")
		}
	}
	if s.State == Disabled {
		out = append(out, "enable")
	} else {
		out = append(out, "disable")
	}
	return out
}
