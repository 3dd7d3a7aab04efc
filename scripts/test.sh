#!/usr/bin/env bash
# test.sh: piagent's one test command. It installs the pinned end-to-end
# dependencies (scripts/e2e-deps.sh, a no-op when they are current), runs
# every Go test with the end-to-end tests switched on against Pi 0.86.1,
# then the end-to-end suite again against Pi 1.6.0:
#
#   ./scripts/test.sh              all packages, both Pis
#   ./scripts/test.sh -run Smoke   extra arguments go to `go test` (both runs)
#
# -count=1: the end-to-end results depend on the installed Pis and the npm
# registry, which go test's cache cannot see.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/e2e-deps.sh
PIAGENT_E2E=1 PIAGENT_E2E_PI=0.86 go test -count=1 ./... "$@"
# The command reader's score on its corpus (issue 22), printed.
go test -count=1 -run '^TestCommandCorpus$' -v ./internal/policy | grep -o 'command corpus: .*' >&2
echo "test.sh: the end-to-end suite on Pi 1.6.0" >&2
PIAGENT_E2E=1 PIAGENT_E2E_PI=1.6 go test -count=1 ./test/e2e/ "$@"
