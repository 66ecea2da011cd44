#!/usr/bin/env bash
# Counts the file-system system calls of two operations on the local
# filesystem, lancekeeper vs Lance 12 (issue 17 item 3, issue 14 speed):
#
#   count:   open the latest version of a table of FRAGS fragments and
#            count its rows (the open/count-*-fragments table), per open;
#   cleanup: clean up every version but the latest of a table of VERSIONS
#            versions (the maint/cleanup-10k-versions table).
#
# Lance 12 has no request counter on the local filesystem, so both sides
# run under `strace -f -c -e trace=file,desc` (every thread; the calls
# that take a path or a file descriptor: openat, statx, read, pread64,
# getdents64, unlink, close, …). Process start-up and the table handle are
# not the operation: each side is also run with the operation skipped
# (lancekeeper: N = 0 / nothing; Lance: bench-count --n 0 / bench-optimize
# --n 0, which opens the table and stops), and that run's calls are
# subtracted. count runs N opens and divides by N.
#
# Not part of any test suite. Needs strace, node and the peer
# (tests/peer/install.sh), and the cached tables: build them once with
#   go run ./tests/bench -rounds 1 -only 'open/count-10k|maint/cleanup-10k'
# Usage: tests/bench/syscalls.sh [count|cleanup|all]
#   env: FRAGS (10000), N (20), VERSIONS (10000), LANCEKEEPER_BENCH_CACHE
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
FRAGS=${FRAGS:-10000}
N=${N:-20}
VERSIONS=${VERSIONS:-10000}
CACHE=${LANCEKEEPER_BENCH_CACHE:-$HOME/.cache/lancekeeper-bench}
command -v strace >/dev/null || { echo "syscalls.sh: strace is not installed" >&2; exit 2; }
eval "$(bash tests/peer/install.sh --env)"
export LANCEKEEPER_PEER_MODULES NO_COLOR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./tests/bench
peer=(node tests/peer/peer.mjs)

# trace OUT CMD...: strace -c of CMD into OUT (the command's stdout goes to OUT.stdout).
trace() {
	local out=$1
	shift
	strace -f -c -e trace=file,desc -o "$out" "$@" >"$out.stdout"
}

# calls FILE: "syscall calls" lines of an strace -c summary.
calls() {
	awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { print $NF, $4 }' "$1"
}

# report TITLE OURS OURS0 LANCE LANCE0 DIV: per-operation calls by syscall,
# (run − baseline) / DIV for each side, sorted by Lance's count.
report() {
	local title=$1 o=$2 o0=$3 l=$4 l0=$5 div=$6
	echo "### $title"
	echo
	echo "| syscall | lancekeeper | Lance 12 |"
	echo "|---|---:|---:|"
	awk -v div="$div" '
		FILENAME == ARGV[1] { o[$1] += $2; names[$1] = 1 }
		FILENAME == ARGV[2] { o[$1] -= $2; names[$1] = 1 }
		FILENAME == ARGV[3] { l[$1] += $2; names[$1] = 1 }
		FILENAME == ARGV[4] { l[$1] -= $2; names[$1] = 1 }
		END {
			for (n in names) {
				a = o[n] / div; b = l[n] / div
				if (a < 0.05 && b < 0.05 && a > -0.05 && b > -0.05) continue
				ta += a; tb += b
				printf "%s %.1f %.1f\n", n, a, b
			}
			printf "~total %.1f %.1f\n", ta, tb
		}' <(calls "$o") <(calls "$o0") <(calls "$l") <(calls "$l0") |
		sort -k3,3nr -k2,2nr | awk '{ n = $1; sub(/^~/, "", n); printf "| %s | %s | %s |\n", (n == "total" ? "**total**" : n), $2, $3 }'
	echo
}

if [[ $what == count || $what == all ]]; then
	dir=$CACHE/open-2.2-$FRAGS.lance
	[[ -f $dir.done ]] || { echo "syscalls.sh: $dir missing; see the header" >&2; exit 2; }
	LANCEKEEPER_BENCH_OP=count trace "$tmp/oc" "$tmp/bench" "$dir" "$N"
	LANCEKEEPER_BENCH_OP=count trace "$tmp/oc0" "$tmp/bench" "$dir" 0
	trace "$tmp/lc" "${peer[@]}" bench-count "$dir" --n "$N"
	trace "$tmp/lc0" "${peer[@]}" bench-count "$dir" --n 0
	report "open + count rows, $FRAGS fragments, per open (N = $N)" "$tmp/oc" "$tmp/oc0" "$tmp/lc" "$tmp/lc0" "$N"
fi

if [[ $what == cleanup || $what == all ]]; then
	src=$CACHE/cleanup-2.2-$VERSIONS.lance
	[[ -f $src.done ]] || { echo "syscalls.sh: $src missing; see the header" >&2; exit 2; }
	# Copies keep modification times (cp -a): both cleanups keep files
	# modified after the oldest kept manifest.
	cp -a "$src" "$tmp/ours.lance"
	cp -a "$src" "$tmp/lance.lance"
	cutoff=$(($(date +%s%3N) + 1000))
	LANCEKEEPER_BENCH_OP=cleanup trace "$tmp/ocl" "$tmp/bench" "$tmp/ours.lance"
	LANCEKEEPER_BENCH_OP=none trace "$tmp/ocl0" "$tmp/bench"
	trace "$tmp/lcl0" "${peer[@]}" bench-optimize "$tmp/lance.lance" --cleanup-older-than-ms "$cutoff" --n 0
	trace "$tmp/lcl" "${peer[@]}" bench-optimize "$tmp/lance.lance" --cleanup-older-than-ms "$cutoff"
	echo "lancekeeper: $(cat "$tmp/ocl.stdout"); Lance 12: $(cat "$tmp/lcl.stdout")"
	echo "left: ours $(find "$tmp/ours.lance" -type f | wc -l) files, Lance $(find "$tmp/lance.lance" -type f | wc -l) files"
	echo
	report "cleanup of $((VERSIONS - 1)) of $VERSIONS versions (one run)" "$tmp/ocl" "$tmp/ocl0" "$tmp/lcl" "$tmp/lcl0" 1
fi
