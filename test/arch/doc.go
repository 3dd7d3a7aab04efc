// Package arch holds the test that keeps docs/architecture.md's package
// graph true: its drawing's arrows, its leaves and its list of every import
// are checked against the source's imports (go test ./test/arch; -update
// rewrites the list).
package arch
