#!/usr/bin/env bash
# Runs a repo script with Node >= 22.19 on PATH and dependencies installed, so that the
# README's two commands work on a fresh clone: `npm run demo` and `npm test`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ensure-node.sh
. "$root/scripts/ensure-node.sh"
jobrelay_ensure_node
jobrelay_ensure_dependencies "$root"
script=$1
shift
exec bash "$root/$script" "$@"
