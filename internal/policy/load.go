package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// This file is the package's only IO: it reads the policy files whose paths
// it is given, and lists the folders SecretStores looks into. Everything
// else takes values.

// Load reads ~/.pi/piagent-policy.json under home and
// .pi/piagent-policy.json under project (either may be "" to skip it) and
// merges them over the embedded base policy. A missing file is no override.
// A file that exists but cannot be read or parsed returns an error, and the
// returned policy, never nil, blocks every call with that error.
func Load(home, project string) (*Policy, error) {
	user, proj, err := read(home, project)
	if err != nil {
		return &Policy{err: err}, err
	}
	return Merge(user, proj)
}

// LoadSettings is Load for what sandbox exec asks before every command —
// Sandbox, ServerSandbox, PassEnv, SecretStores and Err — without building
// the path, tool and shell rules. Only those answers of the policy it returns count.
func LoadSettings(home, project string) (*Policy, error) {
	user, proj, err := read(home, project)
	if err != nil {
		return &Policy{err: err}, err
	}
	base := baseStores()
	p := &Policy{files: map[string]string{LayerBase: ""},
		stores: &stores{protected: slices.Clone(base.protected), readable: slices.Clone(base.readable)}}
	for _, in := range []struct {
		Input
		layer string
	}{{user, LayerUser}, {proj, LayerProject}} {
		if in.Data == nil {
			continue
		}
		f, err := ParseFile(in.File, in.Data)
		if err != nil {
			p.err = err
			return p, err
		}
		p.files[in.layer] = in.File
		p.applySettings(f, in.layer, in.File, in.layer == LayerProject)
		p.stores.apply(f, in.layer == LayerProject)
	}
	return p, nil
}

// read reads the user's and the project's policy files.
func read(home, project string) (Input, Input, error) {
	var user, proj Input
	for _, it := range []struct {
		dir  string
		path func(string) string
		in   *Input
	}{{home, registry.UserPolicy, &user}, {project, registry.ProjectPolicy, &proj}} {
		if it.dir == "" {
			continue
		}
		name := it.path(it.dir)
		if it.in == &proj && home != "" && filepath.Clean(name) == filepath.Clean(registry.UserPolicy(home)) {
			continue // the project is the home directory: the file is the user's own
		}
		// The user's file is theirs alone (StrictModes); a project's is
		// the repository's, read as any file a repository controls.
		data, err := safefile.Read(name, safefile.Options{Own: it.in == &user})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return user, proj, &FileError{File: name, Msg: "cannot read: " + err.Error(), Err: err}
		}
		if data == nil {
			data = []byte{}
		}
		*it.in = Input{File: name, Data: data}
	}
	return user, proj, nil
}

// listDir names the entries of folder dir (none when it cannot be read):
// SecretStores looks into a secret store some of whose files are readable.
func listDir(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}
