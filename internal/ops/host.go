package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/mcpconfig"
	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/setup"
)

// FindPi is PIAGENT_PI, which must be an executable file, or pi on PATH
// (pihost.Find), with the fix for each way it is not there.
func (o *Ops) FindPi() (path, via string, err error) {
	p, via, err := pihost.Find(o.getenv, o.Home, o.Dir)
	switch {
	case errors.Is(err, pihost.ErrNotFound):
		return "", "", refused(err,
			text("install Pi: "+pihost.Install()),
			text("or set PIAGENT_PI to Pi's executable (the package's dist/bundle/cli.js)"))
	case errors.Is(err, pihost.ErrNotExecutable):
		return "", "", &Error{Kind: Usage, Err: fmt.Errorf("PIAGENT_PI=%s is not an executable file", p),
			Hints: texts("chmod +x it, or point PIAGENT_PI at Pi's executable")}
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", "", &Error{Kind: Usage, Err: fmt.Errorf("PIAGENT_PI=%s: %v", p, err),
			Hints: texts("point PIAGENT_PI at Pi's executable, for example <npm prefix>/lib/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js")}
	}
	return p, via, nil
}

// PiVersion reads Pi's version by pihost's one rule.
func (o *Ops) PiVersion(pi string) (pihost.Version, error) {
	v, _, err := pihost.ReadVersion(pi, o.Output)
	if err == nil {
		return v, nil
	}
	why := "no version printed"
	if !errors.Is(err, pihost.ErrVersion) {
		why = err.Error()
	}
	return pihost.Version{}, refused(fmt.Errorf("cannot tell which Pi %s is (pi --version: %s), and how it starts MCP servers depends on it", pi, why),
		text("check that '"+pi+" --version' prints a version, or point PIAGENT_PI at Pi's package executable (dist/bundle/cli.js)"))
}

// Host is the Pi that runs here, and what its version implies.
type Host struct {
	Pi      string `json:"pi,omitempty"` // its executable; "" when none was found
	Version string `json:"version,omitempty"`
	// Adapter: pi-mcp-adapter is among Pi's packages; Ordered: it loads
	// after piagent's extension.
	Adapter bool `json:"adapter"`
	Ordered bool `json:"ordered"`
	// Extension: piagent's extension is among Pi's packages.
	Extension bool `json:"extension"`
	// Builtin says whether Pi's own MCP client is active in a plain `pi`
	// session here, and BuiltinWhy why.
	Builtin    bool         `json:"builtinMCP"`
	BuiltinWhy string       `json:"builtinWhy"`
	Trust      pihost.Trust `json:"trust"`
	Meaning    []string     `json:"meaning"`
	// BuiltinServers is what Pi's built-in client reads here (Pi ≥ 0.99):
	// what `pi mcp list` and `pi mcp login` connect, and what a plain pi
	// session would when neither the adapter nor piagent's extension takes
	// its place. Each carries the gate's state of the server of that name.
	BuiltinServers []BuiltinRow `json:"builtinServers"`
	BuiltinErrors  []string     `json:"builtinErrors"`
}

// BuiltinRow is one server of Pi's built-in client, with the gate's state.
type BuiltinRow struct {
	mcpconfig.BuiltinServer
	State string `json:"state"` // the gate's state, or "yours" for a server of your own file
}

// Host describes the Pi that runs here: its version, whether the adapter
// and piagent's extension (installed at extension) are installed in order,
// whether Pi's built-in MCP client is active for a plain session and why,
// and the project's trust.
func (o *Ops) Host(g *gate.Gate, extension string) Host {
	h := Host{Meaning: []string{}, BuiltinServers: []BuiltinRow{}}
	agentDir := g.View.AgentDir
	h.Trust = pihost.ProjectTrust(agentDir, g.View.Cwd)
	bv := mcpconfig.Builtin(agentDir, g.View.Cwd, h.Trust.Trusted)
	h.BuiltinErrors = bv.Errors
	for _, b := range bv.Servers {
		row := BuiltinRow{BuiltinServer: b, State: "yours"}
		if b.Repository {
			row.State = gate.PendingApproval
			if s, ok := g.Server(b.Name); ok {
				row.State = s.State
			}
			if row.State == gate.Disabled && b.Enabled {
				// disabled: true switches the adapter off, not the built-in
				row.State = "disabled for the adapter only; 'piagent-mcp disable " + b.Name + "' writes enabled: false too"
			}
		}
		h.BuiltinServers = append(h.BuiltinServers, row)
	}
	if data, err := safefile.Read(filepath.Join(agentDir, "settings.json"), safefile.Options{}); err == nil {
		if entries, err := setup.ParsePackages(data); err == nil {
			pkgs := setup.Classify(entries, setup.Where{AgentDir: agentDir, Home: o.Home, ExtensionRoot: filepath.Dir(extension)}, setup.ReadManifest)
			st := setup.Inspect(pkgs, extension)
			h.Adapter = st.Adapter != nil
			h.Ordered = st.Extension != nil && st.Ordered()
			h.Extension = st.Extension != nil
		}
	}
	pi, _, err := o.FindPi()
	if err != nil {
		h.BuiltinWhy = "unknown: Pi was not found"
		return h
	}
	h.Pi = pi
	v, err := o.PiVersion(pi)
	if err != nil {
		h.BuiltinWhy = "unknown: Pi's version cannot be read"
		return h
	}
	h.Version = v.String()
	switch {
	case !pihost.HasBuiltinMCP(v):
		h.BuiltinWhy = "none in Pi " + v.String()
	case h.Adapter:
		h.BuiltinWhy = "replaced by pi-mcp-adapter while the adapter loads (piagent pi also passes --no-mcp); pi mcp list and pi mcp login still use it"
	case h.Extension:
		h.BuiltinWhy = "kept out of pi sessions by piagent's extension (it takes /mcp, since the adapter is not installed); pi mcp list and pi mcp login still use it"
	default:
		h.Builtin = true
		h.BuiltinWhy = "active in a plain pi session: it connects every enabled server of " + Display(o.Home, g.View.Cwd, filepath.Join(agentDir, "mcp.json"))
		if h.Trust.Trusted {
			h.BuiltinWhy += " and, since this project is trusted, of .pi/mcp.json"
		}
		h.Meaning = append(h.Meaning, "plain pi here starts MCP servers without asking piagent; start Pi with 'piagent pi' (it passes --no-mcp) or run 'piagent setup' to install the adapter")
	}
	if h.Trust.Trusted {
		h.Meaning = append(h.Meaning, "this project is trusted: Pi loads its .pi/extensions, .pi/settings.json and .pi/mcp.json; piagent gates the MCP servers, not the extensions")
	}
	if pihost.HasBuiltinMCP(v) && !pihost.CanSwitchOffMCP(v) {
		h.Meaning = append(h.Meaning, "piagent pi refuses this Pi: its built-in MCP client cannot be switched off before "+pihost.NoMCPFlag.String())
	}
	return h
}
