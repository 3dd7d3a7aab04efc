//go:build linux

package sandbox_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOtherCommandLinesHidden: the command's /proc is its PID namespace's
// own, so another process's command line (a password on a mysql line, a
// token in a curl line) is out of its sight. Reading another process's
// environment is refused by more than one layer (TestOtherEnvironsHidden);
// its command line needs no permission at all, so this is what shows the
// /proc mount (issue 41, mutation B-proc). The control reads it
// unconfined.
func TestOtherCommandLinesHidden(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	marker := fmt.Sprintf("piagent-marker-%d", time.Now().UnixNano())
	outside := exec.Command("sleep", "30")
	outside.Args[0] = marker
	must(t, outside.Start())
	defer func() { outside.Process.Kill(); outside.Wait() }()
	// The marker is read from a file, so no process's own command line
	// carries it but the one outside.
	write(t, filepath.Join(w.proj, "marker"), marker+"\n")
	script := `cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -c -x -F -f marker`
	out, _ := w.run(t, script)
	if strings.TrimSpace(out) != "0" {
		t.Errorf("the command saw a command line outside its namespace: %q", out)
	}
	if out, _ := w.runPlain(t, script); strings.TrimSpace(out) == "0" {
		t.Errorf("control: unconfined, the command line outside was not seen: %q", out)
	}
}

// TestPersonsTerminalsHidden: /dev/pts is a pseudo-terminal instance of the
// command's own: a terminal the person has open outside is not there to
// be seen or opened, and the command can still make terminals of its own
// (script, expect, Python's pty). Without the private instance (issue 41,
// mutation B-pts) the person's terminal shows and no new one can be made.
func TestPersonsTerminalsHidden(t *testing.T) {
	needNamespaces(t)
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a pseudo-terminal outside: %v", err)
		}
		t.Skip("no pseudo-terminal here: ", err)
	}
	defer unix.Close(m)
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	must(t, err)
	w := newWorld(t)
	w.env = append(w.env, "A="+attackBin)
	see := fmt.Sprintf(`test -e /dev/pts/%d && echo seen || echo unseen`, n)
	if out, _ := w.run(t, see); strings.TrimSpace(out) != "unseen" {
		t.Errorf("the person's terminal /dev/pts/%d is in the command's sight: %q", n, out)
	}
	if out, _ := w.runPlain(t, see); strings.TrimSpace(out) != "seen" {
		t.Errorf("control: unconfined, /dev/pts/%d is not seen: %q", n, out)
	}
	if out, err := w.run(t, `"$A" openpty`); err != nil || !strings.Contains(out, "worked") {
		t.Errorf("the command cannot make a pseudo-terminal of its own: %v %s", err, out)
	}
}

// TestWritableFoldersNosuid: the folders the command may write are mounted
// nosuid and nodev inside its namespace, whatever the mount they sit on
// outside: a set-ID program there does not run with its owner's rights,
// and no device node there opens its device (issue 41, mutation
// B-nosuid). Read from the command's own /proc/self/mountinfo; the control
// is that the mount holding the project outside is not nosuid, or the test
// could not tell.
func TestWritableFoldersNosuid(t *testing.T) {
	needNamespaces(t)
	w := newWorld(t)
	proj, err := filepath.EvalSymlinks(w.proj)
	must(t, err)
	outside, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	if opts, _ := mountOf(string(outside), proj); hasOpt(opts, "nosuid") {
		t.Skipf("the project's mount outside is already nosuid (%s): nothing to tell", opts)
	}
	out, err := w.run(t, `cat /proc/self/mountinfo`)
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	opts, point := mountOf(out, proj)
	if point != proj {
		t.Fatalf("the project is not a mount of its own inside (it sits on %q)", point)
	}
	for _, o := range []string{"nosuid", "nodev", "rw"} {
		if !hasOpt(opts, o) {
			t.Errorf("the project's mount inside is %q, without %s", opts, o)
		}
	}
}

// mountOf is the per-mount options and mount point of the mount that holds
// path, in a mountinfo text: the last mounted of the longest points.
func mountOf(mountinfo, path string) (opts, point string) {
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		p := f[4]
		if (p == path || p == "/" || strings.HasPrefix(path, p+"/")) && len(p) >= len(point) {
			opts, point = f[5], p
		}
	}
	return opts, point
}

func hasOpt(opts, o string) bool {
	for x := range strings.SplitSeq(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}
