package ops

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	piext "github.com/piagent/piagent/extensions/pi"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
)

// Version is piagent's version, carried in the helper handshake and the
// extension's path. The embedded extension carries the same version
// (TestExtensionVersion).
const Version = "0.1.0"

// ExtensionDir is where the extension of this binary's version lives.
func ExtensionDir(home string) string { return registry.ExtensionDir(home, Version) }

// Extension is the Pi extension this binary carries.
func Extension() fs.FS { return piext.Files() }

// PlaceExtension writes the Pi extension this binary carries under home
// (ExtensionDir; rewriting any file that differs) and returns its folder
// and the files it had to write: `piagent extension path`, and setup.
func (o *Ops) PlaceExtension() (dir string, written []string, err error) {
	if o.Home == "" {
		return "", nil, refused(errors.New("no home directory: cannot place the extension"), text("set HOME"))
	}
	dir = ExtensionDir(o.Home)
	if written, err = WriteExtension(Extension(), dir); err != nil {
		return "", nil, refused(fmt.Errorf("cannot write the Pi extension: %w", err))
	}
	return dir, written, nil
}

// WriteExtension makes dir hold exactly the files of src (extra files are
// left alone) and returns the ones it had to write. The folders piagent owns
// under ~/.pi are made private (0700); files are written atomically, 0600.
// A file that already has the right content as a regular file is not
// touched, so a second run writes nothing.
func WriteExtension(src fs.FS, dir string) (written []string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// dir is <home>/.pi/piagent/extension/<version>: tighten the three that are ours.
	for d, i := dir, 0; i < 3; d, i = filepath.Dir(d), i+1 {
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, err
		}
	}
	err = fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			if p == "." {
				return nil
			}
			return os.MkdirAll(target, 0o700)
		}
		want, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		if same(target, want) {
			return nil
		}
		if err := atomicfile.WriteMode(target, want, 0o600); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	})
	return written, err
}

// ExtensionFilesToWrite lists the embedded extension's files that dir
// lacks or holds differently.
func ExtensionFilesToWrite(dir string) []string {
	var out []string
	src := Extension()
	_ = fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want, err := fs.ReadFile(src, p)
		if err != nil || !same(filepath.Join(dir, filepath.FromSlash(p)), want) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// same reports whether path is a regular file holding want.
func same(path string, want []byte) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(want)) {
		return false
	}
	got, err := os.ReadFile(path)
	return err == nil && bytes.Equal(got, want)
}
