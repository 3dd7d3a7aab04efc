package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ExecUnconfined replaces this process with argv as it is: the fallback a
// caller chose (sandbox exec --auto) where no sandbox applies.
func ExecUnconfined(argv, env []string) error {
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, env)
}

// lookPath finds the program in the PATH of env.
func lookPath(name string, env []string) (string, error) {
	if filepath.IsAbs(name) || filepath.Base(name) != name {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH", name)
}
