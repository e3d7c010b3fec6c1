#!/usr/bin/env bash
# `npm run demo` (through scripts/with-node.sh): see scripts/demo.ts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v redis-server >/dev/null 2>&1; then
  echo "error: redis-server is not on PATH; install it first (Debian/Ubuntu: apt-get install -y redis-server)" >&2
  exit 1
fi
node packages/sandbox/src/cli.ts binaries >/dev/null
exec node scripts/demo.ts "$@"
