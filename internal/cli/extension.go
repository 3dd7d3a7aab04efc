package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	piext "github.com/piagent/piagent/extensions/pi"
	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/registry"
)

func (a *app) extensionCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "extension",
		Short: "The Pi extension this binary carries",
		Args:  cobra.NoArgs,
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	path := &cobra.Command{
		Use:   "path",
		Short: "Write the Pi extension matching this binary under ~/.pi/piagent and print its folder",
		Long: "Writes the Pi extension that matches this binary's version to\n" +
			"~/.pi/piagent/extension/<version>/ (rewriting any file that differs) and\n" +
			"prints the folder. Install it in Pi with:\n\n" +
			"  pi install \"$(piagent extension path)\"",
		Args: cobra.NoArgs,
	}
	path.RunE = run(func(c *cobra.Command, _ []string) error {
		if a.env.Home == "" {
			return refused(errors.New("no home directory: cannot place the extension"), "set HOME")
		}
		dir := extensionDir(a.env.Home)
		if _, err := writeExtension(piext.Files(), dir); err != nil {
			return refused(fmt.Errorf("cannot write the Pi extension: %w", err))
		}
		fmt.Fprintln(a.env.Stdout, dir)
		return nil
	})
	c.AddCommand(path)
	return c
}

// extensionDir is where the extension of this binary's version lives. The
// embedded extension carries the same version (TestExtensionVersion).
func extensionDir(home string) string {
	return registry.ExtensionDir(home, Version)
}

// writeExtension makes dir hold exactly the files of src (extra files are
// left alone) and returns the ones it had to write. The folders piagent owns
// under ~/.pi are made private (0700); files are written atomically, 0600.
// A file that already has the right content as a regular file is not
// touched, so a second run writes nothing.
func writeExtension(src fs.FS, dir string) (written []string, err error) {
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
		if err := writeFileAtomic(target, want); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	})
	return written, err
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

// writeFileAtomic writes data next to path, syncs it, and renames it over
// path, so a reader sees the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error { return atomicfile.WriteMode(path, data, 0o600) }
