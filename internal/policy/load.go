package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/registry"
)

// This file is the package's only IO: it reads the policy files whose paths
// it is given. Everything else takes values.

// Load reads ~/.pi/piagent-policy.json under home and
// .pi/piagent-policy.json under project (either may be "" to skip it) and
// merges them over the embedded base policy. A missing file is no override.
// A file that exists but cannot be read or parsed returns an error, and the
// returned policy, never nil, blocks every call with that error.
func Load(home, project string) (*Policy, error) {
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
		data, err := os.ReadFile(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			ferr := &FileError{File: name, Msg: "cannot read: " + err.Error(), Err: err}
			return &Policy{err: ferr}, ferr
		}
		if data == nil {
			data = []byte{}
		}
		*it.in = Input{File: name, Data: data}
	}
	return Merge(user, proj)
}
