// Package imports reads the MCP server definitions of other tools, one file
// per import kind, the way pi-mcp-adapter 2.36.0 reads them, plus the paths and
// keys those tools really use (the union rule).
package imports

// Kinds lists every import kind in host-discovery order (later kinds override
// earlier ones when host discovery loads them all), from Table.
var Kinds = func() []string {
	out := make([]string, len(table))
	for i, k := range table {
		out[i] = k.Name
	}
	return out
}()

// Candidate statuses.
const (
	StatusLoaded     = "loaded"     // read and used
	StatusMissing    = "missing"    // no such file
	StatusBlank      = "blank"      // only whitespace and comments: absent to the adapter
	StatusUnreadable = "unreadable" // exists but cannot be read or parsed
	StatusShadowed   = "shadowed"   // exists, but the adapter stopped at an earlier candidate
)

// Server is one imported definition.
type Server struct {
	Name  string
	Entry map[string]any // translated into the adapter's ServerEntry shape
	File  string         // the file it was read from
	// Adapter is false for entries only the union rule adds (VS Code's
	// `servers` key, Windsurf's real path, Claude Code's project-nested
	// entries): the adapter will not load them.
	Adapter bool
	// InProject is true when File lies inside the project (cwd) or, for
	// opencode, in the project's opencode.json chain up to the git root.
	InProject bool
}

// Candidate is one path a kind consulted.
type Candidate struct {
	Path      string
	Adapter   bool // the adapter reads this path
	Status    string
	Line      int // for StatusUnreadable, when the parser knows
	Column    int
	Err       string
	InProject bool
}

// Result is what one kind yields for a home and cwd.
type Result struct {
	Kind string
	// Servers in the order the adapter would apply them: for one name, the
	// adapter-loaded entry wins; union-only entries are listed separately
	// and never merged into a loaded one.
	Servers    []Server
	Candidates []Candidate
	// Consulted is every path looked at, present or missing (including the
	// opencode walk's directories checked for .git).
	Consulted []string
}

// Read reads one kind for home and cwd. An unknown kind yields an empty
// Result, as the adapter ignores unknown kinds.
func Read(kind, home, cwd string) Result {
	read, ok := readers[kind]
	if !ok {
		return Result{}
	}
	r := newReader(kind, home, cwd)
	read(r)
	return r.res
}
