//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestEverySeccompRule: a set-ID mode or a device node through each system
// call seccomp has a rule for, not only the ones Go's wrappers use
// (TestSeams): fchmod, fchmodat2, and on x86_64 the old chmod, open, creat,
// mkdir and mknod; and the rules no other attack reaches. Each with its
// control; a rule taken out fails here (issue 41, the SC-* mutations).
func TestEverySeccompRule(t *testing.T) {
	needNamespaces(t)
	worked := fileHas("result", "worked")
	attacks := []attack{
		{name: "setuid fchmod", script: `touch s && "$A" setuid-fchmod "$PWD/s" > result`, effect: worked},
		{name: "setuid fchmodat2", script: `touch s && "$A" setuid-fchmodat2 "$PWD/s" > result`, effect: worked},
		// not set-ID, but seccomp rules no other attack reaches: without
		// a ring io_uring_enter and io_uring_register reach the kernel
		// (EBADF) unless the filter stops them first (issue 41,
		// mutations SC-uring-enter, SC-uring-register)
		{name: "io_uring_enter reaches the kernel", script: `"$A" iouring-enter > result`, effect: worked},
		{name: "io_uring_register reaches the kernel", script: `"$A" iouring-register > result`, effect: worked},
		// TIOCLINUX works on a virtual console only, which no test has:
		// on /dev/null the kernel answers ENOTTY unless the filter
		// answers first (mutation SC-tioclinux)
		{name: "TIOCLINUX reaches the kernel", script: `"$A" tioclinux-reaches > result`, effect: worked},
	}
	if runtime.GOARCH == "amd64" {
		attacks = append(attacks,
			attack{name: "setuid chmod (x86_64)", script: `touch s && "$A" setuid-chmod-legacy "$PWD/s" > result`, effect: worked},
			attack{name: "setuid open(O_CREAT) (x86_64)", script: `"$A" setuid-open-legacy "$PWD/s" > result`, effect: worked},
			attack{name: "setuid creat (x86_64)", script: `"$A" setuid-creat "$PWD/s" > result`, effect: worked},
			attack{name: "setuid mkdir (x86_64)", script: `"$A" setuid-mkdir-legacy "$PWD/d" > result`, effect: worked},
			attack{name: "mknod character device (x86_64)", script: `"$A" mknod-legacy "$PWD/chr" > result`, effect: worked, rootOnly: true},
		)
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) { a.check(t) })
	}
}

// TestDeviceNodesWithCapabilitiesKept: root's sandbox drops CAP_MKNOD, which
// refuses a device node on its own; with the capabilities kept (a fault
// build) mknodat and, on x86_64, mknod of a block or a character device are
// still refused. Two layers remain there, seccomp's device rules (EPERM)
// and Landlock, which grants no device rights in the writable folders
// (EACCES): taking out one of them leaves this test passing. The device
// rules on their own are held by TestSeccompProgram (issue 41, mutations
// SC-mknodat, SC-device-blk, SC-device-chr and SC-mknod). Root only: an ordinary user's namespace cannot make
// device nodes whatever seccomp says. The controls are TestSeams' and
// TestEverySeccompRule's unconfined runs.
func TestDeviceNodesWithCapabilitiesKept(t *testing.T) {
	needNamespaces(t)
	if os.Getuid() != 0 {
		t.Skip("only root's namespace could make a device node without seccomp")
	}
	w := newWorld(t)
	reqs := []string{"mknod", "mknod-char"}
	if runtime.GOARCH == "amd64" {
		reqs = append(reqs, "mknod-legacy")
	}
	for _, req := range reqs {
		node := filepath.Join(w.proj, "node-"+req)
		cmd := exec.Command(faultBin, "sandbox", "exec", "--", attackBin, req, node)
		cmd.Dir, cmd.Env = w.proj, append(w.env, "PIAGENT_SANDBOX_FAULT=keep-caps")
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "refused") {
			t.Errorf("%s with the capabilities kept: %s", req, out)
		}
		if _, err := os.Lstat(node); err == nil {
			t.Errorf("%s with the capabilities kept made %s", req, node)
		}
	}
}
