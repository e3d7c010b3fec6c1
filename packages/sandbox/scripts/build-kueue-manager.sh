#!/usr/bin/env bash
# Builds Kueue's controller manager (sigs.k8s.io/kueue/cmd/kueue) at the pinned version from the
# Go module proxy into a cache directory outside the repository, with its CRDs and webhook
# manifests from the same module next to it. Rebuilds only when the pin (or this script) changes.
#
# Usage: build-kueue-manager.sh <output-dir>
#   <output-dir>/bin/kueue
#   <output-dir>/crds/kueue.x-k8s.io_*.yaml   (every CRD of the release)
#   <output-dir>/manifests/webhooks.yaml      (its webhook configurations)
# The pin comes from the environment (set by packages/sandbox/src/kueue-manager.ts):
#   KUEUE_VERSION (v0.x.y)
set -euo pipefail

out_dir=${1:?usage: build-kueue-manager.sh <output-dir>}
: "${KUEUE_VERSION:?}"
module=sigs.k8s.io/kueue

if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is not on PATH. Install Go >= 1.25 to build Kueue's manager once," >&2
  echo "       or point JOBRELAY_KUEUE_MANAGER at a kueue $KUEUE_VERSION binary" >&2
  echo "       (with crds/ and manifests/ directories next to it)." >&2
  exit 3
fi

step() { printf '[build-kueue-manager] %s (%ss)\n' "$1" "$SECONDS"; }

rm -rf "$out_dir.partial"
mkdir -p "$out_dir.partial/bin" "$out_dir.partial/crds" "$out_dir.partial/manifests"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

# The module has no replace directives, so `go install module@version` builds it as released
# (checked against the checksum database). Without the version stamp it reports "main".
step "go install $module/cmd/kueue@$KUEUE_VERSION (about 5 minutes the first time)"
GOBIN="$out_dir.partial/bin" go install \
  -ldflags "-s -w -X $module/pkg/version.GitVersion=$KUEUE_VERSION" "$module/cmd/kueue@$KUEUE_VERSION"

module_dir=$(go mod download -json "$module@$KUEUE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cp "$module_dir"/config/components/crd/bases/*.yaml "$out_dir.partial/crds/"
cp "$module_dir/config/components/webhook/manifests.yaml" "$out_dir.partial/manifests/webhooks.yaml"
chmod -R u+w "$out_dir.partial" # files copied from the read-only module cache

rm -rf "$out_dir"
mv "$out_dir.partial" "$out_dir"
step "done: $out_dir"
