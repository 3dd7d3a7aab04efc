#!/usr/bin/env bash
# test.sh: piagent's one test command. It installs the pinned end-to-end
# dependencies (scripts/e2e-deps.sh, a no-op when they are current), then
# runs every Go test with the end-to-end tests switched on:
#
#   ./scripts/test.sh              all packages
#   ./scripts/test.sh -run Smoke   extra arguments go to `go test`
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/e2e-deps.sh
PIAGENT_E2E=1 exec go test ./... "$@"
