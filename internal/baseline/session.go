package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/paths"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// SessionDir holds the baselines of the sessions piagent pi runs.
func SessionDir(home string) string { return registry.SessionsDir(home) }

// maxFile bounds a baseline file: the kept content, base64, and the rest.
const maxFile = maxTotal*4/3 + maxEntries*1024

// Save records s as the baseline of the session this process launches and
// returns the file's path, for EnvBaseline.
func Save(home string, s *Snapshot) (string, error) {
	s.Session = os.Getpid()
	s.Start = atomicfile.StartTime(s.Session)
	data, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	p := filepath.Join(SessionDir(home), strconv.Itoa(s.Session)+"-"+strconv.FormatUint(s.Start, 10)+".json")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	return p, atomicfile.WriteMode(p, data, 0o600)
}

// Load reads a baseline file piagent pi saved. It must be in piagent's own
// folder and the person's alone (safefile.Check).
func Load(home, p string) (*Snapshot, error) {
	if !filepath.IsAbs(p) || !paths.Within(SessionDir(home), p) || filepath.Dir(p) != SessionDir(home) {
		return nil, fmt.Errorf("%s=%s is not a file in %s", EnvBaseline, p, SessionDir(home))
	}
	if err := safefile.Check(p); err != nil {
		return nil, err
	}
	data, err := safefile.Read(p, safefile.Options{Max: maxFile})
	if err != nil {
		return nil, err
	}
	var s Snapshot
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if s.Version != 1 || !filepath.IsAbs(s.Project) || len(s.Roots) == 0 {
		return nil, fmt.Errorf("%s: not a baseline of this piagent", p)
	}
	return &s, nil
}

// Unfinished are the saved baselines of project whose launcher no longer
// runs: it was killed before it could compare at Pi's exit.
func Unfinished(home, project string) ([]string, error) {
	entries, err := os.ReadDir(SessionDir(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		pidText, startText, ok2 := strings.Cut(name, "-")
		pid, err1 := strconv.Atoi(pidText)
		start, err2 := strconv.ParseUint(startText, 10, 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || atomicfile.Running(pid, start) {
			continue
		}
		p := filepath.Join(SessionDir(home), e.Name())
		s, err := Load(home, p)
		if err != nil {
			os.Remove(p) // nothing to compare against
			continue
		}
		if s.Project == project {
			out = append(out, p)
		}
	}
	return out, nil
}
