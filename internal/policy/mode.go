package policy

import (
	"slices"
	"strings"

	"github.com/piagent/piagent/internal/paths"
)

// The modes, from the most restrictive to the most permissive. Each mode
// allows every intent the modes before it allow.
const (
	ModeReadOnly    = "readOnly"
	ModeMemory      = "memory"
	ModeDocsWrite   = "docsWrite"
	ModeSourceWrite = "sourceWrite"
	ModeShip        = "ship"
)

// Modes lists the modes in order.
var Modes = []string{ModeReadOnly, ModeMemory, ModeDocsWrite, ModeSourceWrite, ModeShip}

func modeRank(m string) int { return slices.Index(Modes, m) }

// An intent is what a call means to do, ranked like the modes: a mode allows
// an intent whose rank is at most its own.
type intent int

const (
	intentRead intent = iota
	intentMemory
	intentDocs
	intentSource
	intentShip
)

func (i intent) String() string {
	return [...]string{"read", "memory write", "docs write", "source write", "ship"}[i]
}

// toolIntent classifies a call that is not bash (bash is classified from its
// shell analysis).
func (p *Policy) toolIntent(call Call, f *Facts, target func() []string) intent {
	if ReadOnlyTool(call.ToolName) {
		return intentRead
	}
	switch call.ToolName {
	case "write", "edit":
		in := intentDocs
		paths := target()
		if len(paths) == 0 {
			return intentSource
		}
		for _, t := range paths {
			if !p.isDocsPath(t, f) {
				in = intentSource
			}
		}
		return in
	case "mcp":
		// Searching, describing and listing through the proxy only read; a
		// call, a connection or an install may do anything.
		for _, k := range []string{"tool", "connect", "install", "action", "auth", "login", "logout"} {
			if _, ok := call.Input[k]; ok {
				return intentSource
			}
		}
		return intentRead
	}
	if p.builtinTools[call.ToolName] {
		return intentRead // piagent's own tools only ask the policy
	}
	if caps, ok := p.capabilities[call.ToolName]; ok && len(caps) > 0 {
		in := intentRead
		for _, c := range caps {
			switch c {
			case "filesystem-readonly":
			case "memory":
				in = max(in, intentMemory)
			default:
				in = intentSource
			}
		}
		return in
	}
	return intentSource
}

// isDocsPath reports whether an absolute path is documentation inside the
// project: docs/, doc/, plans/ or reports/ at the project root, or a Markdown,
// reStructuredText or plain text file anywhere in the project.
func (p *Policy) isDocsPath(abs string, f *Facts) bool {
	root := strings.ToLower(cleanAbs(f.ProjectRoot, "/"))
	if root == "" || f.ProjectRoot == "" {
		return false
	}
	low := strings.ToLower(abs)
	if !paths.Within(root, low) {
		return false
	}
	rel := strings.TrimPrefix(low, strings.TrimSuffix(root, "/"))
	segs := splitPath(rel)
	for i := range p.docsPatterns {
		if p.docsPatterns[i].matchPath(segs, nil) {
			return true
		}
	}
	if len(segs) == 0 {
		return false
	}
	name := segs[len(segs)-1]
	for _, ext := range []string{".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// effectiveMode is the mode a call runs under: the person's choice (or the
// policy's default), capped by a stricter mode the project chose.
func (p *Policy) effectiveMode(f *Facts) (mode string, capped bool) {
	mode = f.Mode
	if mode == "" {
		mode = p.mode
	}
	if p.projectMode != "" && modeRank(mode) >= 0 && modeRank(p.projectMode) < modeRank(mode) {
		return p.projectMode, true
	}
	return mode, false
}

// minModeFor is the least mode that allows an intent.
func minModeFor(i intent) string { return Modes[int(i)] }
