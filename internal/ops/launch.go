package ops

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/piagent/piagent/internal/gate"
	"github.com/piagent/piagent/internal/launch"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/pihost"
	"github.com/piagent/piagent/internal/setup"
)

// Launch is how piagent pi starts Pi in a project: the plan for this Pi,
// and the configuration of what may run, written.
type Launch struct {
	Plan     pihost.LaunchPlan
	AgentDir string
	Config   string // the generated configuration's file
	Gate     *gate.Gate
	// Held are the repository servers held back, with the command that
	// lets each run.
	Held []launch.Held
}

// PlanLaunch plans a session of Pi (the executable pi, given args) in the
// project at dir, absolute: how this Pi's version starts MCP (a Pi whose
// built-in client cannot be switched off is refused), and the
// configuration of the approved servers written for the adapter.
func (o *Ops) PlanLaunch(dir, pi string, args []string) (Launch, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return Launch{}, refused(fmt.Errorf("the working directory %q is not an absolute path", dir))
	}
	version, err := o.PiVersion(pi)
	if err != nil {
		return Launch{}, err
	}
	l := Launch{AgentDir: paths.AgentDir(o.Home, dir, paths.Getenv(o.getenv))}
	// A settings file that cannot be read counts as loading the adapter:
	// Pi then decides, and an unknown --mcp-config stops it, which is
	// closed.
	loads, lerr := setup.AdapterLoads(l.AgentDir, o.Home, args)
	l.Plan = pihost.PlanLaunch(version, loads || lerr != nil)
	if l.Plan.Refuse != "" {
		return Launch{}, refused(errors.New(l.Plan.Refuse), text(l.Plan.Hint))
	}
	l.Config, l.Gate, l.Held, err = launch.Generate(o.Home, dir, o.getenv, o.Confine(dir))
	if err != nil {
		return Launch{}, refused(fmt.Errorf("cannot prepare the MCP configuration for Pi: %w", err))
	}
	return l, nil
}

// Env is the environment Pi starts with beyond the person's (vars) and the
// arguments put before theirs (front): the adapter pointed at the
// generated file alone, the extension at this binary, Pi's code caches in
// a folder of the person's own.
func (o *Ops) Env(l Launch) (vars map[string]string, front []string, err error) {
	vars = map[string]string{
		launch.EnvMode:     "exclusive",
		launch.EnvLauncher: "1",
		launch.EnvConfig:   l.Config,
		launch.EnvProject:  l.Gate.Project,
	}
	// The extension runs this very binary, by its absolute path, for the
	// helper and for the agent's sandboxed shell: never a PATH lookup.
	if len(o.Binaries) > 0 && o.getenv(launch.EnvBin) == "" {
		vars[launch.EnvBin] = o.Binaries[0]
	}
	// Pi's code caches (jiti's transpiled extensions, Node's compile
	// cache) follow its TMPDIR: a folder of the person's own, registered.
	piTmp, err := launch.PiTempDir(o.Home, o.getenv)
	if err != nil {
		return nil, nil, refused(err, text("or set "+launch.EnvPiTmp+" to a folder of yours that no one else can write"))
	}
	vars["TMPDIR"] = piTmp
	vars[launch.EnvSystemTmp] = o.getenv("TMPDIR")
	if o.LookupEnv != nil {
		if t, ok := o.LookupEnv(launch.EnvSystemTmp); ok {
			vars[launch.EnvSystemTmp] = t // a piagent pi started inside another keeps the first one's
		}
	}
	vars["JITI_RESPECT_TMPDIR_ENV"] = "1" // jiti would ignore a TMPDIR that is the working directory
	if l.Plan.Adapter {
		front = append(front, "--mcp-config", l.Config)
	} else {
		// No adapter: nothing reads the generated file, and Pi 1.x would
		// refuse the unknown --mcp-config.
		delete(vars, launch.EnvMode)
		delete(vars, launch.EnvConfig)
	}
	if l.Plan.NoMCP {
		front = append(front, "--no-mcp")
	}
	return vars, front, nil
}
