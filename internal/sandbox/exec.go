package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/piagent/piagent/internal/paths"
)

// InitArg is the first argument with which piagent runs as a sandbox's init
// (Init): never typed by a person.
const InitArg = "__piagent-sandbox-init"

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

// lookPath finds the program in the PATH of env, through its absolute
// entries alone: the folder a command starts in does not choose what runs.
func lookPath(name string, env []string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	if p := paths.LookPathAbs(name, path, os.Stat); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: not found on PATH", name)
}

// mergeEnv is env with set's KEY=VALUE pairs in place of env's own for the
// same keys: a program reads the first of two, so a caller's TMPDIR must not
// stand before the private one.
func mergeEnv(env, set []string) []string {
	keys := make(map[string]bool, len(set))
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
