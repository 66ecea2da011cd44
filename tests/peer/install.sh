#!/usr/bin/env bash
# Installs the peer driver's pinned node packages (package-lock.json) into a
# cache directory outside the repository and prints that node_modules path.
#
#   cache dir:  ${LANCEKEEPER_PEER_CACHE:-$HOME/.cache/lancekeeper-peer}/<key>/node_modules
#   key:        first 16 hex digits of sha256(package-lock.json)
#
# Idempotent: a finished install is marked with <key>/.complete and reused
# (a cached run takes well under a second). Installs are built in a scratch
# directory and renamed into place, so an interrupted or concurrent run never
# leaves a half-installed cache behind.
#
# Packages come by name from the registry npm is configured for (the lock file
# carries no `resolved` URLs; tests/peer/.npmrc keeps it that way when the lock
# is regenerated with `npm install --package-lock-only` in tests/peer). Optional dependencies are omitted: they are
# lancedb's embedding helpers and the other platforms' binaries; the linux
# x64 binary is a direct dependency in package.json.
#
# Output: the node_modules path on stdout (last line); progress on stderr.
# With --env it prints `export LANCEKEEPER_PEER_MODULES=<path>` instead.
# Without node it warns and exits 0 (the Go tests then skip loudly), unless
# LANCEKEEPER_REQUIRE_PEER=1 (as in CI), where it fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${LANCEKEEPER_PEER_CACHE:-$HOME/.cache/lancekeeper-peer}
mode=${1:-}

if ! command -v node >/dev/null 2>&1; then
	if [ "${LANCEKEEPER_REQUIRE_PEER:-}" = "1" ]; then
		echo "install.sh: node is not installed but LANCEKEEPER_REQUIRE_PEER=1" >&2
		exit 1
	fi
	echo "install.sh: !!! node is not installed: every Lance 12 peer test will be SKIPPED !!!" >&2
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm is not installed" >&2
	exit 1
fi

key=$(sha256sum "$here/package-lock.json" | cut -c1-16)
dest="$cache/$key"

emit() {
	if [ "$mode" = "--env" ]; then
		echo "export LANCEKEEPER_PEER_MODULES=$dest/node_modules"
	else
		echo "$dest/node_modules"
	fi
}

verify() {
	# Loads the native binding, which fails fast if the platform package is missing.
	(cd "$1" && node -e '
		const l = require("@lancedb/lancedb");
		const fs = require("fs");
		const ver = (p) => JSON.parse(fs.readFileSync(`node_modules/${p}/package.json`, "utf8")).version;
		const v = ver("@lancedb/lancedb");
		const a = ver("apache-arrow");
		if (typeof l.connect !== "function") throw new Error("lancedb has no connect()");
		process.stderr.write(`install.sh: @lancedb/lancedb ${v}, apache-arrow ${a}, node ${process.version}\n`);
	')
}

if [ -f "$dest/.complete" ] && [ -d "$dest/node_modules/@lancedb/lancedb" ]; then
	emit
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.install.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$here/.npmrc" "$tmp/"
echo "install.sh: installing pinned packages into $dest" >&2
(
	cd "$tmp"
	# `npm ci` would be the natural choice, but it refuses this lock file: the
	# registry has no 0.39.0 build of lancedb's darwin/arm64/windows optional
	# platform packages, so the lock cannot list them and `npm ci` reports them
	# "missing". `npm install` with the lock installs exactly the locked
	# versions; lockcheck.mjs then proves that every installed package has the
	# version and integrity the committed lock names.
	npm install --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >&2
)
node "$here/lockcheck.mjs" "$here/package-lock.json" "$tmp/node_modules/.package-lock.json" >&2
verify "$tmp"
touch "$tmp/.complete"
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	# Another run finished first (or a stale incomplete dir is in the way).
	if [ -f "$dest/.complete" ]; then
		rm -rf "$tmp"
	else
		rm -rf "$dest"
		mv -T "$tmp" "$dest"
	fi
fi
trap - EXIT
emit
