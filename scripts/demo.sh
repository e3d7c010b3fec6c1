#!/usr/bin/env bash
# `npm run demo`: brings up the local fleet (one management cluster, two workers, Redis)
# and shows how to use it. It leaves everything running; `npm run sandbox -- down` stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ! command -v redis-server >/dev/null 2>&1; then
  echo "error: redis-server is not on PATH; install it first (Debian/Ubuntu: apt-get install -y redis-server)" >&2
  exit 1
fi
node packages/sandbox/src/cli.ts up --workers "${JOBRELAY_DEMO_WORKERS:-2}"
eval "$(node packages/sandbox/src/cli.ts env)"

echo
echo "--- nodes of each cluster ---"
for var in $(env | sed -n 's/^\(JOBRELAY_[A-Z0-9_]*_KUBECONFIG\)=.*/\1/p' | sort); do
  echo "# ${var}"
  kubectl --kubeconfig "${!var}" get nodes -o custom-columns='NAME:.metadata.name,CPU:.status.allocatable.cpu,MEMORY:.status.allocatable.memory,READY:.status.conditions[?(@.type=="Ready")].status'
done

cat <<MSG

The fleet is running. In your shell:

  eval "\$(npm run -s sandbox -- env)"     # KUBECONFIG (management), per-cluster kubeconfigs, REDIS_URL, kubectl on PATH
  kubectl get nodes
  kubectl --kubeconfig "\$JOBRELAY_WORKER_1_KUBECONFIG" get jobs -A

  npm run sandbox -- status                # processes, endpoints, health
  npm run sandbox -- down                  # stop everything

Pods are simulated by KWOK: set pod-template annotations sandbox.jobrelay.dev/run-seconds,
sandbox.jobrelay.dev/exit-code and sandbox.jobrelay.dev/fail-indexes to script their outcome.
MSG
