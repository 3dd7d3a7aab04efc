//go:build !unix

package mcpedit

const openFlags = 0
