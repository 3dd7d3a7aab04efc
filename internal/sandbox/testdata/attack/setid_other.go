//go:build linux && !amd64

package main

import "unsafe"

func unsafePointer(p *byte) unsafe.Pointer { return unsafe.Pointer(p) }

// legacy: this architecture has only the *at system calls.
func legacy(name string, arg func(int) string) (error, bool) { return nil, false }
