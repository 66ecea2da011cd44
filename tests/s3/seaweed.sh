#!/usr/bin/env bash
# Builds the SeaweedFS `weed` binary used by the S3 test suite and caches it
# outside the repository, keyed by module version.
#
# `go install` refuses this module (its go.mod has replace directives), so we
# fetch the module source with `go mod download -json`, copy it to a writable
# temporary directory and build ./weed there.
#
# Usage: tests/s3/seaweed.sh            # build if not cached, print binary path
# Env:   LANCEKEEPER_WEED_VERSION       module version (default pinned below)
#        LANCEKEEPER_CACHE_DIR          cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/lancekeeper)
set -euo pipefail

version="${LANCEKEEPER_WEED_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
module="github.com/seaweedfs/seaweedfs"
cache="${LANCEKEEPER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lancekeeper}"
bin="$cache/weed-$version"

if [[ -x "$bin" ]]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$cache"
work="$(mktemp -d "${TMPDIR:-/tmp}/lancekeeper-weed-build.XXXXXX")"
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Download outside any module so the project's go.mod/go.sum stay untouched.
json="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version")"
dir="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1)"
if [[ -z "$dir" || ! -d "$dir" ]]; then
	echo "seaweed.sh: go mod download gave no module directory:" >&2
	printf '%s\n' "$json" >&2
	exit 1
fi

cp -R "$dir" "$work/src"
chmod -R u+w "$work/src"
start=$(date +%s)
(cd "$work/src" && GOFLAGS=-buildvcs=false go build -o "$bin.tmp.$$" ./weed)
mv -f "$bin.tmp.$$" "$bin"
end=$(date +%s)
echo "seaweed.sh: built $bin in $((end - start))s" >&2
echo "$bin"
