// Package piext carries piagent's Pi extension (the TypeScript package in
// this folder) inside the Go binary, so `go install` brings the extension
// that matches the binary: `piagent extension path` writes it out.
package piext

import (
	"embed"
	"io/fs"
)

// Version is the extension's version; package.json says the same (a test
// checks), and it names the folder `piagent extension path` writes.
const Version = "0.1.0"

//go:embed package.json *.ts
var files embed.FS

// Files is the extension package: package.json and its TypeScript modules,
// at the root of the returned FS.
func Files() fs.FS { return files }
