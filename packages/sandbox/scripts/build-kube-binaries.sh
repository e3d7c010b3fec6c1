#!/usr/bin/env bash
# Builds the pinned Kubernetes control-plane binaries, etcd and KWOK from the Go module
# proxy into a cache directory outside the repository. Rebuilds only when a pin changes.
#
# Usage: build-kube-binaries.sh <output-dir>
# Pins come from the environment (set by packages/sandbox/src/pinned-versions.ts):
#   KUBERNETES_VERSION (v1.35.x), ETCD_VERSION (v3.6.x), KWOK_VERSION (v0.x.y)
set -euo pipefail

out_dir=${1:?usage: build-kube-binaries.sh <output-dir>}
: "${KUBERNETES_VERSION:?}" "${ETCD_VERSION:?}" "${KWOK_VERSION:?}"

if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is not on PATH. Install Go >= 1.25 to build the local clusters once," >&2
  echo "       or point JOBRELAY_KUBE_BINARIES (or KUBEBUILDER_ASSETS) at a directory holding" >&2
  echo "       etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok." >&2
  exit 3
fi

kube_minor=${KUBERNETES_VERSION#v1.}
kube_minor=${kube_minor%%.*}
staging_version="v0.${KUBERNETES_VERSION#v1.}"
work=$(mktemp -d "${TMPDIR:-/tmp}/jobrelay-kube-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out_dir.partial"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

step() { printf '[build-kube-binaries] %s (%ss)\n' "$1" "$SECONDS"; }

# --- Kubernetes: a wrapper module that replaces every staging module with its release ---
step "resolving k8s.io/kubernetes@$KUBERNETES_VERSION"
kube_mod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
mkdir -p "$work/kube"
{
  echo "module jobrelay.dev/sandbox/kube-binaries"
  echo
  echo "go 1.25.0"
  echo
  echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
  echo
  # Every `k8s.io/x => ./staging/src/k8s.io/x` in Kubernetes' own go.mod becomes a pin to
  # the published module of the same release.
  grep -E '^\s*k8s\.io/[A-Za-z0-9._-]+ => \./staging/' "$kube_mod" |
    awk -v v="$staging_version" '{ print "replace " $1 " => " $1 " " v }'
} >"$work/kube/go.mod"
cat >"$work/kube/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
step "go mod tidy (kubernetes)"
(cd "$work/kube" && go mod tidy >/dev/null)
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$kube_minor"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
step "go build kube-apiserver kube-controller-manager kube-scheduler kubectl"
(cd "$work/kube" && go build -ldflags "$ldflags" -o "$out_dir.partial/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl)

# --- etcd: its own module, because its gRPC/otel versions differ from Kubernetes' ---
mkdir -p "$work/etcd"
printf 'module jobrelay.dev/sandbox/etcd-binary\n\ngo 1.25.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$work/etcd/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$work/etcd/tools.go"
step "go build etcd $ETCD_VERSION"
(cd "$work/etcd" && go mod tidy >/dev/null && go build -ldflags "-s -w" -o "$out_dir.partial/etcd" go.etcd.io/etcd/server/v3)

# --- KWOK: no replace directives, so a plain module build works ---
mkdir -p "$work/kwok"
printf 'module jobrelay.dev/sandbox/kwok-binary\n\ngo 1.25.0\n\nrequire sigs.k8s.io/kwok %s\n' "$KWOK_VERSION" >"$work/kwok/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >"$work/kwok/tools.go"
step "go build kwok $KWOK_VERSION"
(cd "$work/kwok" && go mod tidy >/dev/null && go build -ldflags "-s -w" -o "$out_dir.partial/kwok" sigs.k8s.io/kwok/cmd/kwok)

rm -rf "$out_dir"
mv "$out_dir.partial" "$out_dir"
step "done: $out_dir"
