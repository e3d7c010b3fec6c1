#!/usr/bin/env bash
# Runs a TypeScript entry point with the Node that scripts/with-node.sh put first on PATH, so
# `npm run sandbox|controller|differential` work on a machine whose own Node is too old.
set -euo pipefail
exec node "$@"
