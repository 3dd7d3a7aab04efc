//go:build !linux

package sandboxexec

import "syscall"

// childAttr: no parent-death signal outside Linux.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
