package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/approval"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/mcpedit"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// WriteScopes are the --scope values of the write verbs: the four files
// piagent writes.
var WriteScopes = []string{mcpconfig.ScopeGlobal, mcpconfig.ScopePiGlobal, mcpconfig.ScopeProject, mcpconfig.ScopePiProject}

// ScopeFile is one of the four layer files piagent writes.
type ScopeFile struct {
	Scope      string
	Path       string
	Repository bool // inside the project: committed, shared with whoever clones
}

// ScopeFile resolves a --scope value for the project.
func (o *Ops) ScopeFile(scope, project string) (ScopeFile, error) {
	home := o.Home
	switch scope {
	case mcpconfig.ScopeGlobal:
		return ScopeFile{scope, filepath.Join(home, ".config", "mcp", "mcp.json"), false}, nil
	case mcpconfig.ScopePiGlobal:
		return ScopeFile{scope, filepath.Join(paths.AgentDir(home, project, o.getenv), "mcp.json"), false}, nil
	case mcpconfig.ScopeProject:
		return ScopeFile{scope, filepath.Join(project, ".mcp.json"), true}, nil
	case mcpconfig.ScopePiProject:
		return ScopeFile{scope, filepath.Join(project, paths.ConfigDirName(o.getenv), "mcp.json"), true}, nil
	}
	return ScopeFile{}, usage(fmt.Errorf("--scope takes %s (got %q)", strings.Join(WriteScopes, ", "), scope))
}

// ScopeOfPath names the write scope a path belongs to, or "" for another
// layer file (an ancestor or a ~/.agents file).
func (o *Ops) ScopeOfPath(path, project string) string {
	for _, s := range WriteScopes {
		if sf, err := o.ScopeFile(s, project); err == nil && sf.Path == path {
			return s
		}
	}
	return ""
}

// EditFile runs one locked, atomic edit of a layer file with the caller's
// options (DryRun, RemoveIfEmpty, Prepare), and turns the editor's
// refusals into the layer's; the modes, lock and containment are set here.
// What edit returns (a refusal of its own) passes through as it is.
func (o *Ops) EditFile(g *gate.Gate, path string, repository bool, opt mcpedit.Options, edit func(*mcpedit.Doc) error) (mcpedit.Result, error) {
	if kind, ok := foreignFile(g, path); ok {
		return mcpedit.Result{}, refused(fmt.Errorf("%s is the %s import's file, which belongs to another tool; piagent never rewrites another tool's configuration", path, kind),
			text("choose another --scope"))
	}
	opt.Mode, opt.DirMode = 0o600, 0o700
	opt.LockPath = filepath.Join(registry.LocksDir(o.Home), LockName(path))
	opt.Waiting = o.waiting(path)
	if repository {
		opt.Mode, opt.DirMode, opt.Within = 0o644, 0o755, g.View.Cwd
	}
	var own error // edit's own refusal, passed through as it is
	res, err := mcpedit.Update(path, opt, func(d *mcpedit.Doc) error {
		own = edit(d)
		return own
	})
	var oe *Error
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, mcpedit.ErrInvalid):
		return res, refused(err, text("fix the file by hand; piagent never overwrites a file it cannot parse"))
	case errors.Is(err, mcpedit.ErrOutside):
		return res, refused(err, text("a repository's config must not lead out of the repository; edit the file it points to yourself"))
	case own != nil && errors.Is(err, own), errors.As(err, &oe):
		return res, err
	}
	return res, refused(err)
}

// LockName is the lock file for one config file, kept under ~/.pi so that
// no lock file appears in a repository.
func LockName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Base(path) + "-" + hex.EncodeToString(sum[:8]) + ".lock"
}

// foreignFile reports whether path is a file an import kind reads: another
// tool's configuration.
func foreignFile(g *gate.Gate, path string) (string, bool) {
	for _, t := range g.View.ImportTargets {
		if t.Path == path {
			return t.Kind, true
		}
	}
	return "", false
}

// UndoWrite puts a file an edit changed back as it was: a repository
// server whose approval could not be recorded is not left behind without
// it.
func UndoWrite(res mcpedit.Result) error {
	if !res.Existed {
		return os.Remove(res.Path)
	}
	fi, err := os.Stat(res.Path)
	if err != nil {
		return err
	}
	return atomicfile.WriteMode(res.Path, res.Before, fi.Mode().Perm())
}

// writtenApproval is the consent to record for a repository server whose
// repository-owned part is exactly the definition written to file (what a
// consent records is gate's: Server.Consent): nil when it is no
// repository server, or, with a note, when another repository file also
// shapes it (the person then reviews the whole definition and approves
// it).
func (o *Ops) writtenApproval(g *gate.Gate, name, file string) (*approval.Decision, gate.Fix) {
	s, ok := g.Server(name)
	if !ok || !s.Repository {
		return nil, gate.Fix{}
	}
	var others []string
	for _, ct := range s.Config.Contributions {
		if ct.Repository && ct.File != file {
			others = append(others, Display(o.Home, g.View.Cwd, ct.File))
		}
	}
	if len(others) > 0 {
		return nil, gate.Fix{Text: fmt.Sprintf("%s is not approved: %s also shape its definition; review it with", name, strings.Join(others, ", ")),
			Steps: []gate.Step{{Sub: "get", Args: name}}, Note: "then approve it", Quoted: true}
	}
	dec := s.Consent(o.now())
	return &dec, gate.Fix{}
}

// ApproveFirst is the mcpedit.Prepare of a repository-scope write: before
// the file is written, it records the approval of each server in names()
// as the file will define it (the view with the new content overlaid),
// and keeps each digest in pre. A kill between the two writes leaves an
// approval of a definition no file holds yet, which runs nothing: the
// server and its approval, both or neither (issue 40). undo puts back
// the decisions it replaced.
func (o *Ops) ApproveFirst(project, lexical string, names func() []string, pre map[string]string) func(mcpedit.Result) (func(), error) {
	return func(res mcpedit.Result) (func(), error) {
		overlay := map[string][]byte{lexical: res.After, res.Path: res.After}
		g, err := gate.Load(gate.Options{Home: o.Home, Cwd: project, Getenv: gate.RealEnv(o.getenv), Overlay: overlay})
		if err != nil {
			return nil, refused(err)
		}
		if g.StoreErr != nil {
			return nil, refused(fmt.Errorf("nothing was written: the approval store cannot be used: %w", g.StoreErr),
				StoreHints(registry.ApprovalStore(o.Home), g.StoreErr)...)
		}
		before, err := approval.Open(registry.ApprovalStore(o.Home)).Load()
		if err != nil {
			return nil, refused(err)
		}
		var undos []func()
		undo := func() {
			for _, u := range slices.Backward(undos) {
				u()
			}
		}
		for _, name := range names() {
			dec, _ := o.writtenApproval(g, name, res.Path)
			if dec == nil {
				continue
			}
			if err := o.StoreDecision(g.Project, name, dec); err != nil {
				undo()
				return nil, err
			}
			prev, had := before.Get(g.Project, name)
			undos = append(undos, func() {
				if had {
					o.StoreDecision(g.Project, name, &prev)
				} else {
					o.StoreDecision(g.Project, name, nil)
				}
				delete(pre, name)
			})
			pre[name] = dec.Digest
		}
		return undo, nil
	}
}

// Need is something a written server still lacks before its first call.
type Need struct {
	Server   string `json:"server"`
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Optional bool   `json:"optional,omitempty"`
	Text     string `json:"text"`
}

// Needs is what the gate says the named servers still lack.
func Needs(g *gate.Gate, names []string) []Need {
	var out []Need
	for _, name := range names {
		s, ok := g.Server(name)
		if !ok {
			continue
		}
		switch s.State {
		case gate.NeedsEnv:
			for _, v := range s.MissingEnv {
				out = append(out, Need{Server: name, Kind: "env", Name: v, Text: "export " + v + " in the shell that starts Pi"})
			}
		case gate.NeedsCommand:
			out = append(out, Need{Server: name, Kind: "command", Name: s.Command, Text: s.Command + " installed and on PATH"})
		case gate.OAuth:
			out = append(out, Need{Server: name, Kind: "oauth", Name: name, Text: "sign in once with /mcp-auth " + name + " inside Pi"})
		}
	}
	return out
}

// Written is what a write did beyond the file: the approvals a repository
// scope recorded for what the person wrote, notes about other layers
// (each a fix the edge words), and what the servers still need.
type Written struct {
	Approved []string
	Notes    []gate.Fix
	Needs    []Need
}

// FinishWrite records, after a write of res that changed the file, the
// approval of each repository server written (pre holds the digests
// ApproveFirst recorded before the write; a server the file no longer
// holds as approved is approved as written), and says what else the
// person should know. A write whose approval could not be recorded is put
// back (the server and its approval, both or neither); the error says so.
func (o *Ops) FinishWrite(project string, res mcpedit.Result, written []string, pre map[string]string, needs bool) (Written, error) {
	var out Written
	var approveErr error
	g, err := o.Gate(project)
	if err == nil && res.Changed {
		refresh := false
		for _, name := range written {
			if d, ok := pre[name]; ok {
				if s, ok := g.Server(name); ok && s.Digest == d && s.State != gate.PendingApproval && s.State != gate.ApprovalChanged {
					out.Approved = append(out.Approved, name) // recorded before the write
					refresh = true
					continue
				}
			}
			// The file is not what was approved before the write (another
			// writer came between): approve what it holds, as written.
			dec, note := o.writtenApproval(g, name, res.Path)
			if dec != nil {
				if err := o.Record(g.Project, name, dec); err != nil {
					approveErr = err
					break
				}
				out.Approved = append(out.Approved, name)
			}
			if !note.IsZero() {
				out.Notes = append(out.Notes, note)
			}
		}
		if refresh {
			o.RefreshLaunch(project)
		}
	}
	if err == nil {
		for _, name := range written {
			if s, ok := g.Server(name); ok && s.Config.Source.File != res.Path && s.Config.Source.File != "" {
				out.Notes = append(out.Notes, text(fmt.Sprintf("%s is also defined in %s, which takes precedence", name, Display(o.Home, g.View.Cwd, s.Config.Source.File))))
			}
		}
		if !slices.ContainsFunc(g.View.Layers, func(l mcpconfig.Layer) bool { return l.Path == res.Path }) {
			out.Notes = append(out.Notes, text(fmt.Sprintf("the adapter does not read %s here (PI_MCP_CONFIG_MODE=exclusive, or another layer has the same path)", res.Path)))
		}
		if needs {
			out.Needs = Needs(g, written)
		}
	}
	if approveErr != nil && res.Changed && len(out.Approved) == 0 && UndoWrite(res) == nil {
		return out, fmt.Errorf("nothing was written, %s is as it was: %w", Display(o.Home, project, res.Path), approveErr)
	}
	return out, approveErr
}
