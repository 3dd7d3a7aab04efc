package imports

import (
	"path/filepath"
	"strings"
)

// Kind is one import kind, the one place that names it: its reader, the
// files it reads, and how a path names them. The registry's import files
// (what no agent may write), the launcher's home kinds (what piagent pi may
// leave to the adapter) and the self-protection's suspicious fragments
// (a write whose target cannot be resolved) are derived from it;
// TestTableHoldsTheReaders holds the files to what each reader reads.
type Kind struct {
	Name string
	// Home are the files beneath the home directory: the adapter's
	// candidates and, for the union rule, the tool's own.
	Home [][]string
	// Project are the files beneath the project (opencode also walks up
	// to the git root; that file arrives through the reader's consulted
	// paths). A kind with none reads only the home directory.
	Project [][]string
	// Marks are lowercase fragments, one of which every path to one of the
	// kind's files holds, whatever folder it is written from.
	Marks []string
	read  func(*reader)
}

// table is every kind in host-discovery order.
var table = []Kind{
	{Name: "cursor", read: (*reader).readCursor,
		Home:  [][]string{{".cursor", "mcp.json"}},
		Marks: []string{".cursor"}},
	{Name: "claude-code", read: (*reader).readClaudeCode,
		Home:  [][]string{{".claude", "mcp.json"}, {".claude.json"}, {".claude", "claude_desktop_config.json"}},
		Marks: []string{".claude"}},
	{Name: "claude-desktop", read: (*reader).readClaudeDesktop,
		// The adapter reads the macOS path on every system; Claude Desktop
		// on Linux keeps its own under ~/.config.
		Home:  [][]string{{"Library", "Application Support", "Claude", "claude_desktop_config.json"}, {".config", "Claude", "claude_desktop_config.json"}},
		Marks: []string{"claude_desktop"}},
	{Name: "codex", read: (*reader).readCodex,
		Home:  [][]string{{".codex", "config.toml"}, {".codex", "config.json"}},
		Marks: []string{".codex"}},
	{Name: "opencode", read: (*reader).readOpencode,
		Home:    [][]string{{".config", "opencode", "opencode.json"}},
		Project: [][]string{{"opencode.json"}},
		Marks:   []string{"opencode"}},
	{Name: "windsurf", read: (*reader).readWindsurf,
		Home:  [][]string{{".windsurf", "mcp.json"}, {".codeium", "windsurf", "mcp_config.json"}},
		Marks: []string{"windsurf", ".codeium"}},
	{Name: "vscode", read: (*reader).readVSCode,
		Project: [][]string{{".vscode", "mcp.json"}},
		Marks:   []string{".vscode"}},
}

// Table returns every import kind in host-discovery order.
func Table() []Kind { return append([]Kind(nil), table...) }

// Files are the files the kinds read beneath home and, when project is
// not "", the project, in the table's order.
func Files(home, project string) []string {
	var out []string
	for _, k := range table {
		for _, e := range k.Home {
			out = append(out, filepath.Join(append([]string{home}, e...)...))
		}
	}
	if project != "" {
		for _, k := range table {
			for _, e := range k.Project {
				out = append(out, filepath.Join(append([]string{project}, e...)...))
			}
		}
	}
	return out
}

// HomeOnly reports whether kind reads no file of the project, so that its
// files are the person's whatever the working directory.
func HomeOnly(kind string) bool {
	for _, k := range table {
		if k.Name == kind {
			return len(k.Project) == 0
		}
	}
	return false
}

// Marked reports whether the lowercase path lit holds a kind's mark.
func Marked(lit string) bool {
	for _, k := range table {
		for _, m := range k.Marks {
			if strings.Contains(lit, m) {
				return true
			}
		}
	}
	return false
}
