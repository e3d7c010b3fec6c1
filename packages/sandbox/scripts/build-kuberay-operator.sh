#!/usr/bin/env bash
# Builds KubeRay's ray-operator at the pinned version from the Go module proxy into a cache
# directory outside the repository, and copies the CRDs the operator needs from the same
# module next to it. Rebuilds only when the pin (or this script) changes.
#
# Usage: build-kuberay-operator.sh <output-dir>
#   <output-dir>/bin/ray-operator
#   <output-dir>/crds/ray.io_{rayclusters,rayjobs,rayservices}.yaml
# The pin comes from the environment (set by packages/sandbox/src/kuberay-operator.ts):
#   KUBERAY_VERSION (v1.x.y)
set -euo pipefail

out_dir=${1:?usage: build-kuberay-operator.sh <output-dir>}
: "${KUBERAY_VERSION:?}"
module=github.com/ray-project/kuberay/ray-operator

if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is not on PATH. Install Go >= 1.24 to build KubeRay's ray-operator once," >&2
  echo "       or point JOBRELAY_KUBERAY_OPERATOR at a ray-operator $KUBERAY_VERSION binary" >&2
  echo "       (with its CRDs in a crds/ directory next to it, or in JOBRELAY_KUBERAY_CRDS)." >&2
  exit 3
fi

step() { printf '[build-kuberay-operator] %s (%ss)\n' "$1" "$SECONDS"; }

rm -rf "$out_dir.partial"
mkdir -p "$out_dir.partial/bin" "$out_dir.partial/crds"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

# The module has no replace directives, so `go install module@version` builds it as released.
step "go install $module@$KUBERAY_VERSION"
GOBIN="$out_dir.partial/bin" go install -ldflags "-s -w" "$module@$KUBERAY_VERSION"

# The CRDs ship in the module (config/crd/bases); go install downloaded it into the module cache.
module_dir=$(go mod download -json "$module@$KUBERAY_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
# RayService too: the operator always runs its RayService controller, and without that CRD
# its cache never syncs and the whole operator exits after two minutes.
for kind in rayclusters rayjobs rayservices; do
  cp "$module_dir/config/crd/bases/ray.io_$kind.yaml" "$out_dir.partial/crds/"
done
chmod -R u+w "$out_dir.partial" # files copied from the read-only module cache

rm -rf "$out_dir"
mv "$out_dir.partial" "$out_dir"
step "done: $out_dir"
