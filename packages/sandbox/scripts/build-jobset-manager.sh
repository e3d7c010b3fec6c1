#!/usr/bin/env bash
# Builds JobSet's controller manager (sigs.k8s.io/jobset) at the pinned version from the Go
# module proxy into a cache directory outside the repository, with its CRD and webhook
# manifests from the same module next to it. Rebuilds only when the pin (or this script) changes.
#
# Usage: build-jobset-manager.sh <output-dir>
#   <output-dir>/bin/jobset-manager
#   <output-dir>/manifests/jobset.x-k8s.io_jobsets.yaml   (the CRD)
#   <output-dir>/manifests/webhooks.yaml                  (its webhook configurations, and
#   <output-dir>/manifests/{mutating,validating}-patch.yaml  the release's patches of them)
# The pin comes from the environment (set by packages/sandbox/src/jobset-manager.ts):
#   JOBSET_VERSION (v0.x.y) and JOBSET_MODULE_SUM (the module's go.sum hash, h1:...)
set -euo pipefail

out_dir=${1:?usage: build-jobset-manager.sh <output-dir>}
: "${JOBSET_VERSION:?}" "${JOBSET_MODULE_SUM:?}"
module=sigs.k8s.io/jobset

if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is not on PATH. Install Go >= 1.24 to build JobSet's manager once," >&2
  echo "       or point JOBRELAY_JOBSET_MANAGER at a jobset-manager $JOBSET_VERSION binary" >&2
  echo "       (with the CRD and webhook manifests in a manifests/ directory next to it)." >&2
  exit 3
fi

step() { printf '[build-jobset-manager] %s (%ss)\n' "$1" "$SECONDS"; }

rm -rf "$out_dir.partial"
mkdir -p "$out_dir.partial/bin" "$out_dir.partial/manifests"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

# The checksum database has no entry for this module version (its lookup answers 404), so
# `go install` and a checked download both fail. The download skips the database for this
# one module, and the hash it reports is compared with the pinned one: no integrity is lost.
step "go mod download $module@$JOBSET_VERSION"
download=$(GONOSUMDB=$module go mod download -json "$module@$JOBSET_VERSION")
sum=$(printf '%s\n' "$download" | sed -n 's/.*"Sum": "\(.*\)".*/\1/p')
module_dir=$(printf '%s\n' "$download" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
if [ "$sum" != "$JOBSET_MODULE_SUM" ]; then
  echo "error: $module@$JOBSET_VERSION from the Go module proxy has hash '$sum', pinned '$JOBSET_MODULE_SUM'." >&2
  echo "       Refusing to build it. Clear it from the module cache (go clean -modcache) and retry;" >&2
  echo "       if the pin is wrong, check the hash against the release's go.sum before changing it." >&2
  exit 4
fi

# `go install module@version` does not work here (the proxy refuses the version list it asks
# for), so the module is built in a writable copy of itself: its go.mod and go.sum are complete.
src="$out_dir.partial/src"
cp -R "$module_dir" "$src"
chmod -R u+w "$src" # copied from the read-only module cache
step "go build (a few minutes the first time)"
(cd "$src" && go build -o "$out_dir.partial/bin/jobset-manager" \
  -ldflags "-s -w -X $module/pkg/version.GitVersion=$JOBSET_VERSION" .)
cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$out_dir.partial/manifests/"
cp "$src/config/components/webhook/manifests.yaml" "$out_dir.partial/manifests/webhooks.yaml"
# The release's kustomization patches the pod webhooks to JobSet's pods alone (objectSelector).
cp "$src"/config/components/webhook/patches/{mutating,validating}-patch.yaml "$out_dir.partial/manifests/"
rm -rf "$src"

rm -rf "$out_dir"
mv "$out_dir.partial" "$out_dir"
step "done: $out_dir"
