#!/usr/bin/env bash
# mutate.sh: the mutation check (issue 41, docs/testing.md). In a scratch
# copy of this checkout, each mutation in test/mutate/mutations.txt weakens
# one security decision, its tests run, and the code is put back; the
# report says which were killed (a test failed) and which survived.
#
#   scripts/mutate.sh              every mutation (about an hour on 2 cores)
#   scripts/mutate.sh R1 'SC-*'    the named ones (shell patterns on the id)
#   scripts/mutate.sh -list        the list, without running it
#   scripts/mutate.sh -keep R1     keep the scratch copy and each test's log
#
# The extension's mutations run its unit tests with the Node 22 that
# scripts/e2e-deps.sh installs. Exit status 0: every mutation was killed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./test/mutate "$@"
