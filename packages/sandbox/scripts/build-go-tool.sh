#!/usr/bin/env bash
# Builds one Go command at a pinned version from the Go module proxy into a cache directory
# outside the repository (`go install module/cmd@version`, as released: these modules have no
# replace directives). Rebuilds only when the pin (or this script) changes.
#
# Usage: build-go-tool.sh <output-dir>     → <output-dir>/<command name>
# From the environment (set by packages/sandbox/src/go-tools.ts):
#   TOOL_PACKAGE  e.g. helm.sh/helm/v4/cmd/helm
#   TOOL_VERSION  e.g. v4.3.2
#   TOOL_LDFLAGS  extra -ldflags (e.g. the version stamp the tool's own release build sets)
set -euo pipefail

out_dir=${1:?usage: build-go-tool.sh <output-dir>}
: "${TOOL_PACKAGE:?}" "${TOOL_VERSION:?}"

if ! command -v go >/dev/null 2>&1; then
  echo "error: Go is not on PATH. Install Go >= 1.25 to build $TOOL_PACKAGE@$TOOL_VERSION once." >&2
  exit 3
fi

step() { printf '[build-go-tool] %s (%ss)\n' "$1" "$SECONDS"; }

rm -rf "$out_dir.partial"
mkdir -p "$out_dir.partial"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

step "go install $TOOL_PACKAGE@$TOOL_VERSION"
GOBIN="$out_dir.partial" go install -ldflags "-s -w ${TOOL_LDFLAGS:-}" "$TOOL_PACKAGE@$TOOL_VERSION"

rm -rf "$out_dir"
mv "$out_dir.partial" "$out_dir"
step "done: $out_dir"
