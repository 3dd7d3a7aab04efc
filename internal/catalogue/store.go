package catalogue

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/safefile"
)

// Pin is a recorded catalogue with when and how it was taken.
type Pin struct {
	Catalogue
	PinnedAt string `json:"pinnedAt"`
	// By is "first-sight" (recorded the first time the catalogue was seen)
	// or "person" (accepted with piagent-mcp approve NAME --tools).
	By string `json:"by"`
}

type file struct {
	Version int            `json:"version"`
	Pins    map[string]Pin `json:"pins"`
}

// Key is a pin's key: the approval it belongs to. project is "" for a
// server of the person's own files (the same everywhere); definition is the
// approval digest of a repository server, or the digest of the whole
// definition of any other.
func Key(project, server, definition string) string {
	return project + "\x00" + server + "\x00" + definition
}

// Load reads the pins at path; a missing file has none. A file that cannot
// be read is an error: the caller fails closed.
func Load(path string) (map[string]Pin, error) {
	data, err := safefile.Read(path, safefile.Options{Max: atomicfile.MaxState, Own: true, UTF8: true})
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Pin{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: unsupported version %d", path, f.Version)
	}
	if f.Pins == nil {
		f.Pins = map[string]Pin{}
	}
	return f.Pins, nil
}

// Record stores c under key, under the file's lock. With firstSight, an
// existing pin is kept (another process recorded it first).
func Record(path, key string, c Catalogue, firstSight bool, now time.Time) error {
	return recordPin(path, key, c, firstSight, now, atomicfile.LockOptions{})
}

// decideWait bounds the wait for the pins' lock on the way to a decision:
// a pin that cannot be recorded in time is an error the decision blocks on,
// naming the holder, never a call left waiting.
const decideWait = 200 * time.Millisecond

func recordPin(path, key string, c Catalogue, firstSight bool, now time.Time, o atomicfile.LockOptions) error {
	return atomicfile.UpdateWait(path, o, func(old []byte) ([]byte, error) {
		f := file{Version: 1, Pins: map[string]Pin{}}
		if len(old) > 0 {
			if err := json.Unmarshal(old, &f); err != nil {
				return nil, fmt.Errorf("%s cannot be read, so no pin is recorded: %w", path, err)
			}
			if f.Pins == nil {
				f.Pins = map[string]Pin{}
			}
		}
		if _, ok := f.Pins[key]; ok && firstSight {
			return old, nil
		}
		by := "person"
		if firstSight {
			by = "first-sight"
		}
		f.Pins[key] = Pin{Catalogue: c, PinnedAt: now.UTC().Format(time.RFC3339), By: by}
		return json.MarshalIndent(f, "", "  ")
	})
}
