package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/grant"
	"github.com/piagent/piagent/internal/nethosts"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
)

// GrantOptions are the inputs of grant.
type GrantOptions struct {
	Project string // absolute
	Server  string // "" with Agent
	// Agent grants to the agent's own commands in the project (Read, a
	// secret store its sandbox would hide, and Net).
	Agent bool
	// Read and Write are folders, Env variable names of Pi's environment,
	// Net hosts (HOST[:PORT], *.DOMAIN, a loopback port). A relative or
	// ~ folder is taken from Dir and Home.
	Read, Write, Env, Net []string
	Dir                   string
	Remove                bool
}

// Granted is what a server (or the agent's commands) may reach after a
// grant.
type Granted struct {
	Agent   bool
	Server  string
	Project string
	Grant   grant.Grant
	File    string // where grants are recorded
	// Missing are granted folders that do not exist yet (the grant applies
	// once they do).
	Missing []string
}

func usage(err error) *Error { return &Error{Kind: Usage, Err: err} }

// Grant records (or, with Remove, takes back) what a server may reach
// beyond its sandbox profile in the project, or with Agent what the agent's
// commands may read of the secret stores and reach on the network. A folder that holds or is a file that
// decides what runs cannot be granted for writing.
func (o *Ops) Grant(opt GrantOptions) (Granted, error) {
	if len(opt.Read) == 0 && len(opt.Write) == 0 && len(opt.Env) == 0 && len(opt.Net) == 0 {
		return Granted{}, usage(errors.New("name a folder with --read or --write, a variable with --env, or a host with --net"))
	}
	var net []string
	for _, h := range opt.Net {
		e, err := nethosts.ParseEntry(h)
		if err != nil {
			return Granted{}, usage(fmt.Errorf("--net %v", err))
		}
		net = append(net, e.String())
	}
	out := Granted{Agent: opt.Agent, File: registry.GrantsFile(o.Home)}
	abs := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			out = append(out, paths.Abs(opt.Dir, paths.Expand(o.Home, p)))
		}
		return out
	}
	if opt.Agent {
		if len(opt.Write) > 0 || len(opt.Env) > 0 {
			return Granted{}, usage(errors.New("--agent takes --read and --net alone: the agent's commands write the project, and get only the variables your policy passes"))
		}
		project := opt.Project
		if r, err := filepath.EvalSymlinks(project); err == nil {
			project = r
		}
		read := abs(opt.Read)
		got, err := grant.Add(o.Home, project, grant.Agent, grant.Grant{Read: read, Net: net}, opt.Remove)
		if err != nil {
			return Granted{}, refused(fmt.Errorf("cannot record the grant: %w", err))
		}
		out.Project, out.Grant = project, got
		out.Missing = missing(read, opt.Remove)
		return out, nil
	}
	for _, v := range opt.Env {
		if !validEnvName(v) {
			return Granted{}, usage(fmt.Errorf("--env %q: want a variable name (letters, digits, _)", v))
		}
	}
	g, err := o.Gate(opt.Project)
	if err != nil {
		return Granted{}, err
	}
	s, err := Server(g, opt.Server)
	if err != nil {
		return Granted{}, err
	}
	r, w := abs(opt.Read), abs(opt.Write)
	if !opt.Remove {
		set := registry.NewSet(g.Registry(o.Binaries, nil))
		for _, d := range w {
			if f, ok := set.Match(d); ok {
				return Granted{}, refused(fmt.Errorf("cannot grant writing %s: it is %s, which decides what runs", d, f))
			}
			if f, ok := set.Holds(d); ok {
				return Granted{}, refused(fmt.Errorf("cannot grant writing %s: it holds %s, which decides what runs", d, f), text("grant a folder beneath it instead"))
			}
		}
	}
	got, err := grant.Add(o.Home, g.Project, s.Name, grant.Grant{Read: r, Write: w, Env: opt.Env, Net: net}, opt.Remove)
	if err != nil {
		return Granted{}, refused(fmt.Errorf("cannot record the grant: %w", err))
	}
	o.RefreshLaunch(g.Project)
	out.Server, out.Project, out.Grant = s.Name, g.Project, got
	out.Missing = missing(append(append([]string{}, r...), w...), opt.Remove)
	return out, nil
}

// missing are the granted folders that do not exist yet (none when the
// grant is taken away).
func missing(folders []string, remove bool) []string {
	var out []string
	for _, d := range folders {
		if _, err := os.Stat(d); !remove && errors.Is(err, os.ErrNotExist) {
			out = append(out, d)
		}
	}
	return out
}

// validEnvName reports a portable variable name.
func validEnvName(v string) bool {
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		return false
	}
	for _, c := range v {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
