#!/usr/bin/env bash
# Finds or provides the Chromium that the dashboard's end-to-end test drives headless through
# playwright-core (e2e/test/dashboard.test.ts). Sourced by .ci/run and scripts/test.sh; or run
# it alone: `bash scripts/ensure-chromium.sh` prints the browser's path.
#
# jobrelay_ensure_chromium exports JOBRELAY_CHROMIUM. It takes the first usable one of
#   1. $JOBRELAY_CHROMIUM (if set, it must be usable),
#   2. /usr/bin/chromium (Debian's package), then chromium or chromium-browser on PATH,
# where usable means it runs here and prints its version. Failing those, it installs one:
#   3. as root with apt-get: Debian's chromium package (apt-get update, apt-get install
#      --no-install-recommends), through jobrelay_apt_install of scripts/ensure-redis.sh.
# Nothing is downloaded from a browser vendor: playwright-core never fetches browsers, and no
# other source is tried. When nothing works, one message names the command to run.

# shellcheck source=ensure-redis.sh
[ "$(type -t jobrelay_apt_install)" = function ] || . "$(dirname "${BASH_SOURCE[0]}")/ensure-redis.sh"

# True when $1 is an executable Chromium that runs here (it prints "Chromium 156...").
jobrelay_chromium_usable() {
  [ -f "$1" ] && [ -x "$1" ] || return 1
  "$1" --headless --no-sandbox --version >/dev/null 2>&1
}

# The first usable Chromium found; prints its path.
jobrelay_find_chromium() {
  local name path
  for path in /usr/bin/chromium; do
    if jobrelay_chromium_usable "$path"; then
      printf '%s\n' "$path"
      return 0
    fi
  done
  for name in chromium chromium-browser; do
    path=$(command -v "$name" 2>/dev/null) || continue
    if jobrelay_chromium_usable "$path"; then
      printf '%s\n' "$path"
      return 0
    fi
  done
  return 1
}

jobrelay_ensure_chromium() {
  local found command
  if [ -n "${JOBRELAY_CHROMIUM:-}" ]; then
    if jobrelay_chromium_usable "$JOBRELAY_CHROMIUM"; then
      export JOBRELAY_CHROMIUM
      return 0
    fi
    echo "error: JOBRELAY_CHROMIUM=$JOBRELAY_CHROMIUM is not a Chromium that runs here" >&2
    return 1
  fi
  if found=$(jobrelay_find_chromium); then
    export JOBRELAY_CHROMIUM=$found
    return 0
  fi
  if jobrelay_can_apt; then
    echo "Chromium: not found: installing Debian's chromium with apt-get (the dashboard's browser test drives it headless)" >&2
    if jobrelay_apt_install chromium && found=$(jobrelay_find_chromium); then
      export JOBRELAY_CHROMIUM=$found
      return 0
    fi
  fi
  if command -v apt-get >/dev/null 2>&1; then
    command='sudo apt-get install -y --no-install-recommends chromium'
    [ "$(id -u)" = 0 ] && command=${command#sudo }
  else
    command="the system package manager's install of Chromium, or export JOBRELAY_CHROMIUM=/path/to/chromium"
  fi
  echo "error: the dashboard's browser test needs Chromium and could not find or install one. Run: $command" >&2
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  jobrelay_ensure_chromium || exit 1
  printf '%s\n' "$JOBRELAY_CHROMIUM"
fi
