//go:build linux && sandboxfault

package sandbox

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// faultFromEnv reads PIAGENT_SANDBOX_FAULT from piagent's own environment
// (this build only; the command's is filtered): "mount" makes the init's
// namespace unable to mount, as Ubuntu's AppArmor restriction does.
func faultFromEnv() string { return os.Getenv("PIAGENT_SANDBOX_FAULT") }

func faultMount(fault string) error {
	if faultHas(fault, "mount") {
		return unix.EPERM
	}
	return nil
}

// faultHas reports one of the comma-separated faults: "mount", "keep-caps"
// (the command keeps the init's capabilities), "no-tiocsti-rule" (the
// seccomp filter lacks its TIOCSTI and TIOCLINUX rules).
func faultHas(fault, name string) bool {
	for f := range strings.SplitSeq(fault, ",") {
		if f == name {
			return true
		}
	}
	return false
}

// faultDial reads PIAGENT_SANDBOX_DIAL ("HOST:PORT=ADDR,..."): the proxy
// dials ADDR for HOST:PORT, so that a test's local fake answers for a
// registry's name (this build only).
func faultDial() map[string]string {
	v := os.Getenv("PIAGENT_SANDBOX_DIAL")
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for kv := range strings.SplitSeq(v, ",") {
		if k, a, ok := strings.Cut(kv, "="); ok {
			m[k] = a
		}
	}
	return m
}

// The seams' steps timed (fault "steps", this build only): each step's
// nanoseconds, written to standard error on one line by stepsFlush, for
// BenchmarkSeamsSteps.
var steps struct {
	on   bool
	t0   time.Time
	line []byte
}

func stepsOn(fault string) { steps.on = faultHas(fault, "steps") }

func stepStart() {
	if steps.on {
		steps.t0 = time.Now()
	}
}

func stepStop(name string) {
	if steps.on {
		steps.line = append(steps.line, ' ')
		steps.line = append(steps.line, name...)
		steps.line = append(steps.line, '=')
		steps.line = strconv.AppendInt(steps.line, time.Since(steps.t0).Nanoseconds(), 10)
	}
}

func stepsFlush() {
	if steps.on && len(steps.line) > 0 {
		os.Stderr.Write(append(append([]byte("piagent-steps:"), steps.line...), '\n'))
		steps.line = steps.line[:0]
	}
}
