package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

type modeStore struct {
	Version  int               `json:"version"`
	Projects map[string]string `json:"projects"`
}

// ProjectModeChoice returns the mode the person chose for a project key, ""
// when none. A store that cannot be read is an error; callers fail closed.
func ProjectModeChoice(home, project string) (string, error) {
	st, err := readModes(home)
	if err != nil {
		return "", err
	}
	return st.Projects[project], nil
}

func readModes(home string) (modeStore, error) {
	path := registry.ModeStore(home)
	st := modeStore{Version: 1, Projects: map[string]string{}}
	data, err := safefile.Read(path, safefile.Options{Own: true, UTF8: true})
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := 1, 1
			for _, b := range data[:min(int(se.Offset), len(data))] {
				if b == '\n' {
					line, col = line+1, 1
				} else {
					col++
				}
			}
			return st, fmt.Errorf("mode store %s:%d:%d: %w", path, line, max(col-1, 1), err)
		}
		return st, fmt.Errorf("mode store %s: %w", path, err)
	}
	if st.Version != 1 {
		return st, fmt.Errorf("mode store %s: unsupported version %d", path, st.Version)
	}
	if st.Projects == nil {
		st.Projects = map[string]string{}
	}
	for p, m := range st.Projects {
		if !slices.Contains(Modes, m) {
			return st, fmt.Errorf("mode store %s: project %s has unknown mode %q", path, p, m)
		}
	}
	return st, nil
}

// SetProjectMode records the person's mode for a project ("" forgets it),
// atomically and under the store's lock.
func SetProjectMode(home, project, mode string) error {
	if mode != "" && !slices.Contains(Modes, mode) {
		return fmt.Errorf("unknown mode %q (modes: %v)", mode, Modes)
	}
	return atomicfile.Update(registry.ModeStore(home), func([]byte) ([]byte, error) {
		st, err := readModes(home)
		if err != nil {
			return nil, err
		}
		if mode == "" {
			delete(st.Projects, project)
		} else {
			st.Projects[project] = mode
		}
		data, err := json.MarshalIndent(st, "", "  ")
		return append(data, '\n'), err
	})
}
