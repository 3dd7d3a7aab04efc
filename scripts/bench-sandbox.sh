#!/usr/bin/env bash
# bench-sandbox.sh: the sandbox's start beside its peers (docs/performance.md).
# Builds this checkout's binaries, then runs three interleaved rounds of
# `perf stat -r 20` (CPU time over every process, page faults) and a 20-run
# wall-clock loop for each variant, in a fresh git project:
#
#   scripts/bench-sandbox.sh                # as the user running it
#   BASE=/path/to/old/bin scripts/bench-sandbox.sh   # and an older piagent
#                                     # (and its piagent-sandbox, when built)
#
# Needs perf; bwrap and unshare rows are skipped when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/" ./cmd/... && go build -o "$bin/floor" ./internal/sandbox/testdata/floor)
printf 'package main\nfunc main() {}\n' >"$bin/hello.go"
(cd "$bin" && GO111MODULE=off go build -o hello hello.go)
proj="$(mktemp -d)"
cd "$proj" && git init -q .
variants=("true|/bin/true" "hello|$bin/hello")
# the floors (internal/sandbox/testdata/floor): one Go process applying
# Landlock and seccomp; two, with the namespaces, as the sandbox is made
variants+=("floor1|$bin/floor landlock $proj -- /bin/true" "floor2|$bin/floor twoproc $proj -- /bin/true")
command -v bwrap >/dev/null && variants+=("bwrap|bwrap --ro-bind / / --dev /dev --proc /proc --bind $proj $proj --unshare-all --die-with-parent /bin/true")
command -v unshare >/dev/null && variants+=("unshare|unshare -Urm -p -f /bin/true")
[[ -n "${BASE:-}" ]] && variants+=("base|$BASE/piagent sandbox exec -- /bin/true")
[[ -x "${BASE:-}/piagent-sandbox" ]] && variants+=("baselean|$BASE/piagent-sandbox exec -- /bin/true")
variants+=("piagent|$bin/piagent sandbox exec -- /bin/true" "lean|$bin/piagent-sandbox exec -- /bin/true")
for r in 1 2 3; do
  load="$(cut -d' ' -f1 /proc/loadavg)"
  for v in "${variants[@]}"; do
    name="${v%%|*}" cmd="${v#*|}"
    # shellcheck disable=SC2086
    out="$(perf stat -r 20 -x, -e task-clock,page-faults $cmd 2>&1 >/dev/null)"
    cpu="$(grep task-clock <<<"$out" | cut -d, -f1)" faults="$(grep page-faults <<<"$out" | cut -d, -f1)"
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    for _ in $(seq 20); do $cmd >/dev/null 2>&1; done
    e=$(date +%s%N)
    printf 'round %d load %s %-9s wall %7.2f ms  cpu %7.2f ms  faults %s\n' "$r" "$load" "$name" "$(echo "($e-$s)/20000000" | bc -l)" "$cpu" "$faults"
  done
done
