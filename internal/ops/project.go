package ops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/paths"
)

// ProjectDir is the project a command names: p (--project), or the
// working directory when p is empty; "~" expanded, a relative path taken
// from the working directory, made clean. It must be a directory.
func (o *Ops) ProjectDir(p string) (string, error) {
	if p == "" {
		p = o.Dir
	}
	p = paths.Expand(o.Home, p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(o.Dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", usage(fmt.Errorf("project %s: %v", p, err))
	}
	if !fi.IsDir() {
		return "", usage(fmt.Errorf("project %s is not a directory", p))
	}
	return filepath.Clean(p), nil
}
