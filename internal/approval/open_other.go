//go:build !unix

package approval

const openFlags = 0
