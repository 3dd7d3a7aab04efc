package mcpconfig

// Entry is one server definition as JSON decodes it: values are string,
// float64, bool, nil, []any and map[string]any.
type Entry = map[string]any

// Options says whose view to compute. The zero Getenv has no variables.
type Options struct {
	Home       string              // the user's home directory (os.homedir() for the adapter)
	Cwd        string              // the directory Pi starts in; the project
	Getenv     func(string) string // process environment (PI_CODING_AGENT_DIR, PI_MCP_CONFIG_MODE, PI_PACKAGE_DIR)
	ConfigPath string              // --mcp-config: replaces the pi-global path when set
	// Overlay, when set, gives a layer file's content as it is about to be
	// written, by the layer's path: the view is the one that file will
	// make (an add records the approval of what it writes before writing
	// it). A file piagent does not own is never overlaid.
	Overlay map[string][]byte
}

// Layer ids, as the adapter names them, plus the sources below the file layers.
const (
	LayerHost          = "host-discovery"       // settings.hostConfigDiscovery: "on"
	LayerSharedGlobal  = "shared-global"        // ~/.config/mcp/mcp.json
	LayerAgentsGlobal  = "agents-global"        // ~/.agents/mcp.json
	LayerAgentsNested  = "agents-nested-global" // ~/.agents/mcp/mcp.json
	LayerPiGlobal      = "pi-global"            // <agentDir>/mcp.json or --mcp-config
	LayerAncestor      = "ancestor"             // opt-in layers between a configured root and the cwd
	LayerSharedProject = "shared-project"       // <cwd>/.mcp.json
	LayerPiProject     = "pi-project"           // <cwd>/.pi/mcp.json
	LayerAgentPlugin   = "agent-plugin"         // settings.agentPluginPaths
	LayerPackage       = "package"              // Pi packages with pi.mcp
	LayerClaudePlugin  = "claude-plugin"        // claudePlugins
)

// Scopes are the SCOPE column and the --scope values of the write commands.
const (
	ScopeGlobal    = "global"     // shared-global and the ~/.agents layers
	ScopePiGlobal  = "pi-global"  // pi-global
	ScopeProject   = "project"    // shared-project
	ScopePiProject = "pi-project" // pi-project
	ScopeAncestor  = "ancestor"
	ScopeHost      = "host"    // host-config discovery
	ScopePackage   = "package" // Pi package, agent plugin or Claude plugin
)

// Layer is one config file the adapter considers, in precedence order.
type Layer struct {
	ID               string
	Scope            string
	Path             string
	Present          bool // the file exists and is not blank
	Loaded           bool // parsed and used; false when skipped (see View.Skipped)
	Repository       bool // the file lives in, or was chosen by, the repository
	Servers          map[string]Entry
	Imports          []string       // the layer's imports array, as written (strings only)
	Settings         map[string]any // nil when the layer has none
	HasClaudePlugins bool
	ClaudePlugins    any
}

// Contribution is one source's fragment of a server's definition.
type Contribution struct {
	Layer      string // layer id that declared it or imported it
	Scope      string
	File       string // the file where the entry is written
	Kind       string // import kind when imported; "" when declared in the layer itself
	Entry      Entry  // as written (after the adapter's translation for codex and opencode)
	Repository bool   // repository-controlled
	Reason     string // why it is repository-controlled; "" otherwise
}

// Source is where the winning definition was written.
type Source struct {
	File string `json:"file"`
	Kind string `json:"kind,omitempty"` // import kind, "agent-plugin", "package", "claude-plugin"; absent when declared directly
}

// Server is one server as the adapter sees it, or as the union rule adds it.
type Server struct {
	Name   string
	Entry  Entry  // the merged definition: what runs
	Scope  string // the layer that declared it or imported it (the seed's SCOPE column)
	Layer  string // that layer's id
	Source Source
	// Contributions in precedence order, lowest first. Merging them with the
	// adapter's rules gives Entry.
	Contributions []Contribution
	// AdapterLoads is false for entries only the union rule adds (VS Code's
	// `servers` key, Windsurf's real path, Claude Code's project-nested
	// entries): listed so they are gated, but the adapter will not run them.
	AdapterLoads         bool
	RepositoryControlled bool
	RepositoryReason     string
}

// Skipped is a file that exists but could not be used.
type Skipped struct {
	Path   string `json:"path"`
	Layer  string `json:"layer,omitempty"` // layer id, for config layers
	Kind   string `json:"kind,omitempty"`  // import kind, for import targets
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Reason string `json:"reason"`
	// Beyond is set when the adapter would read the file but piagent cannot
	// (jsonc.ErrBeyondLimits): what it declares is unknown, so the gate
	// blocks every tool call rather than treat it as absent.
	Beyond bool `json:"beyond,omitempty"`
}

// ImportDecl is one layer's imports array.
type ImportDecl struct {
	File       string   `json:"file"`
	Layer      string   `json:"layer"`
	Kinds      []string `json:"kinds"`
	Repository bool     `json:"repositoryControlled"`
}

// Import target statuses.
const (
	TargetLoaded     = "loaded"
	TargetMissing    = "missing"
	TargetBlank      = "blank"
	TargetUnreadable = "unreadable" // exists but cannot be read or parsed
	TargetShadowed   = "shadowed"   // exists, but the adapter stopped at an earlier candidate
)

// ImportTarget is one candidate file of one import kind.
type ImportTarget struct {
	Kind       string   `json:"kind"`
	Path       string   `json:"path"`
	Status     string   `json:"status"`
	Adapter    bool     `json:"adapterReads"` // the adapter reads this path (false: only the tool's real path)
	Error      string   `json:"error,omitempty"`
	Line       int      `json:"line,omitempty"`
	Column     int      `json:"column,omitempty"`
	Repository bool     `json:"repositoryControlled"` // the file is inside the project, or a repository layer selected the kind
	DeclaredBy []string `json:"declaredBy,omitempty"` // files whose imports (or host discovery) name this kind
}

// SettingOrigin is one layer that set a settings key.
type SettingOrigin struct {
	File       string `json:"file"`
	Layer      string `json:"layer"`
	Repository bool   `json:"repositoryControlled"`
	Value      any    `json:"value"`
}

// View is the adapter's view of MCP configuration for one home and cwd.
type View struct {
	Home, Cwd, AgentDir string
	ConfigDir           string // ".pi" unless rebranded
	Exclusive           bool   // PI_MCP_CONFIG_MODE=exclusive
	Layers              []Layer
	Servers             []Server // sorted by name; a union-only entry follows the loaded one of the same name
	Settings            map[string]any
	SettingOrigins      map[string][]SettingOrigin // per key, precedence order, lowest first
	Imports             []ImportDecl
	ImportTargets       []ImportTarget
	Skipped             []Skipped
	// Ignored are parts of a loaded file the adapter passes over: an
	// mcpServers that is not an object, a server entry that is not one.
	Ignored []Skipped `json:"ignored,omitempty"`
	// Consulted is every path a reader looked at, present or missing, sorted
	// and unique: the gate's cache signature is built from it.
	Consulted []string
}
