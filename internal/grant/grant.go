// Package grant keeps what a person lets an approved server reach beyond its
// sandbox profile: folders it may write or read (a filesystem server pointed
// at ~/notes, a server that keeps state in ~/.local/share/x). Grants live in
// ~/.pi/piagent-grants.json, outside every repository, keyed by project and
// server; a repository can never grant, and an agent's tool call cannot
// write the file (it is in the registry).
package grant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// Grant is one server's extra reach.
type Grant struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Env names variables of Pi's environment the server receives beyond
	// the default set and its own definition's (a credential it needs).
	Env []string `json:"env,omitempty"`
	// Net names hosts (HOST, HOST:PORT, *.DOMAIN) the server reaches
	// through piagent's proxy beyond the package registries, and ports of
	// this machine's loopback (127.0.0.1:5432) forwarded to it.
	Net []string `json:"net,omitempty"`
}

// Agent is the name under which grants for the agent's own commands in a
// project are kept (piagent-mcp grant --agent): no server is named so.
const Agent = "(agent)"

type file struct {
	Version  int                         `json:"version"`
	Projects map[string]map[string]Grant `json:"projects"`
}

// Of returns the grant recorded for server in project (zero when none).
func Of(home, project, server string) (Grant, error) {
	f, err := read(home, nil)
	if err != nil {
		return Grant{}, err
	}
	return f.Projects[project][server], nil
}

func read(home string, data []byte) (file, error) {
	f := file{Version: 1, Projects: map[string]map[string]Grant{}}
	path := registry.GrantsFile(home)
	if data == nil {
		var err error
		data, err = safefile.Read(path, safefile.Options{Own: true, UTF8: true})
		if os.IsNotExist(err) {
			return f, nil
		}
		if err != nil {
			return f, err
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("grants %s: %w", path, err)
	}
	if f.Version != 1 {
		return f, fmt.Errorf("grants %s: unsupported version %d", path, f.Version)
	}
	if f.Projects == nil {
		f.Projects = map[string]map[string]Grant{}
	}
	return f, nil
}

// Add records read and write folders (absolute) and variable names for
// server in project; remove takes the named ones away instead.
func Add(home, project, server string, add Grant, remove bool) (Grant, error) {
	var out Grant
	err := atomicfile.Update(registry.GrantsFile(home), func(old []byte) ([]byte, error) {
		f, err := read(home, old)
		if err != nil {
			return nil, err
		}
		g := f.Projects[project][server]
		edit := func(list []string, dirs []string) []string {
			for _, d := range dirs {
				if filepath.IsAbs(d) {
					d = filepath.Clean(d)
				}
				if remove {
					list = slices.DeleteFunc(list, func(x string) bool { return x == d })
				} else if !slices.Contains(list, d) {
					list = append(list, d)
				}
			}
			slices.Sort(list)
			return list
		}
		g.Read, g.Write, g.Env, g.Net = edit(g.Read, add.Read), edit(g.Write, add.Write), edit(g.Env, add.Env), edit(g.Net, add.Net)
		if f.Projects[project] == nil {
			f.Projects[project] = map[string]Grant{}
		}
		if len(g.Read) == 0 && len(g.Write) == 0 && len(g.Env) == 0 && len(g.Net) == 0 {
			delete(f.Projects[project], server)
			if len(f.Projects[project]) == 0 {
				delete(f.Projects, project)
			}
		} else {
			f.Projects[project][server] = g
		}
		out = g
		data, err := json.MarshalIndent(f, "", "  ")
		return append(data, '\n'), err
	})
	return out, err
}
