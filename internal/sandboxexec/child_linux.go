package sandboxexec

import "syscall"

// childAttr: the supervised child is killed when its supervisor dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
