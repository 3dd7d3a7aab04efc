package mcpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/piagent/piagent/internal/jsonc"
	"github.com/piagent/piagent/internal/safefile"
)

// maxConfig is the largest configuration file piagent reads.
const maxConfig = safefile.DefaultMax

// readConfig reads a configuration file the adapter reads, through
// safefile: a link to a device, a FIFO or a file over maxConfig is an error
// at once, never a hang or a read without end. Such a file may still be
// read by the adapter, so the error wraps jsonc.ErrBeyondLimits: what it
// declares is unknown and the gate blocks rather than treat it as absent.
// A folder reads as EISDIR, as it does for the adapter.
func readConfig(p string) ([]byte, error) {
	data, err := safefile.Read(p, safefile.Options{Max: maxConfig})
	if err == nil {
		return data, nil
	}
	if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	}
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", jsonc.ErrBeyondLimits, err)
	}
	return nil, err
}

// resolvePath is Node's path.resolve: later absolute parts restart the path.
func resolvePath(base string, parts ...string) string {
	p := base
	for _, part := range parts {
		if filepath.IsAbs(part) {
			p = part
		} else {
			p = filepath.Join(p, part)
		}
	}
	return filepath.Clean(p)
}

// realpath resolves every symlink in p, as realpathSync does.
func realpath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// identity is the adapter's getConfigPathIdentity: the real path when there
// is one, else the cleaned path.
func identity(p string) string {
	if r, err := realpath(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// exists is existsSync: true when stat (following symlinks) succeeds.
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// containedPath is the adapter's resolveContainedPath: candidate resolved
// against root, or "" when it leaves root (a name starting ".." counts as
// leaving, as in the adapter).
func containedPath(root, candidate string) string {
	resolved := resolvePath(root, candidate)
	rel, err := filepath.Rel(root, resolved)
	if err != nil {
		return ""
	}
	if rel == "." || (!strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)) {
		return resolved
	}
	return ""
}

// realContainedPath is resolveRealContainedPath: candidate's real path when
// it stays within root's real path. allowMissing lets the tail of the path
// not exist yet (the nearest existing ancestor is resolved instead).
func realContainedPath(root, candidate string, allowMissing bool) string {
	contained := containedPath(root, candidate)
	if contained == "" {
		return ""
	}
	canonical := func(p string) (string, error) {
		existing := p
		for allowMissing && !exists(existing) {
			parent := filepath.Dir(existing)
			if parent == existing {
				return "", os.ErrNotExist
			}
			existing = parent
		}
		r, err := realpath(existing)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(existing, p)
		if err != nil {
			return "", err
		}
		return resolvePath(r, rel), nil
	}
	cr, err := canonical(root)
	if err != nil {
		return ""
	}
	cc, err := canonical(contained)
	if err != nil {
		return ""
	}
	return containedPath(cr, cc)
}

// trimJS is String.prototype.trim: Unicode white space and the BOM.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' })
}
