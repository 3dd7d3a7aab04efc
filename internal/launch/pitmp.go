package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
	"github.com/piagent/piagent/internal/sandboxexec"
)

// Environment variables for Pi's temporary folder.
const (
	// EnvPiTmp names the folder piagent pi gives Pi as TMPDIR instead of
	// <home>/.pi/piagent/tmp. It must be the person's own folder, writable
	// by no one else.
	EnvPiTmp = "PIAGENT_PI_TMPDIR"
	// EnvSystemTmp is the TMPDIR piagent pi was started with ("" for the
	// system's): the sandbox keeps the agent's private folders there, not in
	// Pi's.
	EnvSystemTmp = sandboxexec.EnvSystemTmp
)

// PiTempDir is the temporary folder piagent pi gives Pi. Pi's extension
// loader (jiti) keeps the code it transpiled, piagent's guard among it, in
// <TMPDIR>/jiti and trusts a file there whose end matches its source's
// hash; Node keeps its compile cache in <TMPDIR>/node-compile-cache. In the
// shared /tmp anyone on the machine could make those folders first, so the
// launcher moves them to a folder of the person's own that piagent
// registers: the agent's tools and commands cannot write it either.
func PiTempDir(home string, getenv func(string) string) (string, error) {
	dir := getenv(EnvPiTmp)
	switch {
	case dir == "":
		dir = filepath.Join(registry.OwnDir(home), "tmp")
	case !filepath.IsAbs(dir):
		return "", fmt.Errorf("%s=%s is not an absolute path", EnvPiTmp, dir)
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("cannot create Pi's temporary folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cannot create Pi's temporary folder: %w", err)
	}
	if why := foreign(dir); why != "" {
		return "", fmt.Errorf("refusing %s as Pi's temporary folder: %s, and Pi loads code it finds there; remove it (rm -rf %s) and start again", dir, why, dir)
	}
	return dir, nil
}

// foreign says why folder dir is not the person's alone ("" when it is, or
// is absent): safefile.CheckFolder's rule (a real folder, the person's or
// root's, writable by no one else, in a folder others cannot replace it in).
func foreign(dir string) string {
	var ue *safefile.UnsafeError
	if err := safefile.CheckFolder(dir); errors.As(err, &ue) {
		if ue.Path != dir {
			return "its folder " + ue.Path + " " + ue.Why
		}
		return "it " + ue.Why
	} else if err != nil {
		return err.Error()
	}
	return ""
}

// PiCaches are the folders in a temporary folder whose code Pi runs at its
// next start.
var PiCaches = []string{"jiti", "node-compile-cache"}

// ForeignCache says why cache folder dir, when it exists, is not this
// person's (or root's) alone ("" when it is, or is absent): another user
// made it, or others may write it.
func ForeignCache(dir string) string { return foreign(dir) }
