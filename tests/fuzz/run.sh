#!/usr/bin/env bash
# tests/fuzz/run.sh — run every `go test -fuzz` target of the module and
# print a summary table (docs/benchmarks.md, "Fuzzing (session 22)").
#
#   FUZZTIME  how long each target fuzzes (default 10m)
#   PARALLEL  fuzz workers per target, -parallel (default 1)
#   JOBS      targets fuzzed at the same time (default 1)
#   RESULTS   results directory (default: a new temporary directory)
#   ONLY      extended regexp on "pkg.Target" selecting targets (default all)
#   SKIP      extended regexp on "pkg.Target" leaving targets out (default none)
#   BINDIR    where the test binaries go (default $RESULTS/bin)
#   REBUILD   0: reuse the binaries already in $BINDIR (their commit is in
#             $BINDIR/commit); default 1, build them
#   MINIMIZETIME  -fuzzminimizetime (default 200x). Go minimizes every new
#             interesting input before keeping it, 60 s by default; with the
#             few-KB real-file seeds of the datafile targets that was nearly
#             all of a run (FuzzReadRows21: 10 executions in 45 s)
#
# The targets are found by scanning the module's *_test.go files for
# `func FuzzXxx(`; every package holding one is compiled once, with fuzzing
# instrumentation, into $BINDIR (never into the repository), so every
# target of a run tests the same tree (the commit is in $RESULTS/commit).
# Each binary runs in its package directory, as `go test` runs it, so the
# seed corpora under testdata/fuzz are used and a new failing input is
# written there. Everything runs at nice 19.
#
# Per target the log is $RESULTS/<pkg>.<Target>.log; the table is kept up to
# date in $RESULTS/summary.md while the run goes on. The exit status is 1
# when any target failed (or did not build), 0 otherwise.
set -u -o pipefail

FUZZTIME=${FUZZTIME:-10m}
PARALLEL=${PARALLEL:-1}
JOBS=${JOBS:-1}
ONLY=${ONLY:-}
SKIP=${SKIP:-}
RESULTS=${RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/lancekeeper-fuzz.XXXXXX")}
BINDIR=${BINDIR:-$RESULTS/bin}
REBUILD=${REBUILD:-1}
MINIMIZETIME=${MINIMIZETIME:-200x}

renice -n 19 -p $$ >/dev/null 2>&1 || true
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel) || exit 2
cd "$root" || exit 2
mkdir -p "$RESULTS" "$BINDIR" || exit 2
module=$(go list -m) || exit 2
gocache=$(go env GOCACHE)

commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain --untracked-files=no -- . | wc -l)
built="commit $commit$([ "$dirty" -gt 0 ] && echo " (+$dirty uncommitted changes)")"
if [ "$REBUILD" = 0 ] && [ -f "$BINDIR/commit" ]; then
	built="$(cat "$BINDIR/commit") (binaries reused; HEAD is $commit)"
else
	echo "$built" >"$BINDIR/commit.tmp"
fi
{
	echo "$built"
	echo "started $(date -u +%FT%TZ)"
	echo "FUZZTIME=$FUZZTIME PARALLEL=$PARALLEL JOBS=$JOBS MINIMIZETIME=$MINIMIZETIME ONLY=$ONLY SKIP=$SKIP"
} >"$RESULTS/commit"
cat "$RESULTS/commit"
echo "results: $RESULTS"

# Targets: "dir Target" per line, sorted.
targets=$(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*\(' . |
	grep -v -e '/testdata/' -e '/node_modules/' |
	sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#; s#^\./[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#. \1#' |
	sort -u)
if [ -n "$ONLY" ]; then
	targets=$(echo "$targets" | while read -r d t; do echo "$d.$t" | grep -Eq -- "$ONLY" && echo "$d $t"; done)
fi
if [ -n "$SKIP" ]; then
	targets=$(echo "$targets" | while read -r d t; do echo "$d.$t" | grep -Eq -- "$SKIP" || echo "$d $t"; done)
fi
[ -n "$targets" ] || { echo "no fuzz targets" >&2; exit 2; }
echo "$targets" >"$RESULTS/targets"
echo "$(echo "$targets" | wc -l) targets in $(echo "$targets" | cut -d' ' -f1 | sort -u | wc -l) packages"

binname() { echo "$1" | tr '/.' '__'; }

# Compile each package once, with fuzzing instrumentation (-fuzz makes go
# test instrument the package under test; -c writes the binary).
for d in $(echo "$targets" | cut -d' ' -f1 | sort -u); do
	b="$BINDIR/$(binname "$d").test"
	[ "$REBUILD" = 0 ] && [ -x "$b" ] && continue
	if ! nice -n 19 go test -c -fuzz=. -o "$b" "./$d" >"$RESULTS/build.$(binname "$d").log" 2>&1; then
		echo "build failed: $d (see $RESULTS/build.$(binname "$d").log)" >&2
	fi
done

[ -f "$BINDIR/commit.tmp" ] && mv "$BINDIR/commit.tmp" "$BINDIR/commit"

# run_one DIR TARGET: fuzz one target; writes $RESULTS/<name>.log and .row.
run_one() {
	local d=$1 t=$2 name b log start end secs st execs fails crasher pkgpath
	name="$(binname "$d").$t"
	b="$BINDIR/$(binname "$d").test"
	log="$RESULTS/$name.log"
	pkgpath=$module${d#.}
	[ "$d" = . ] || pkgpath=$module/$d
	start=$(date +%s)
	if [ ! -x "$b" ]; then
		echo "no binary (build failed)" >"$log"
		st=2
	else
		# A target that stops answering is killed 15 minutes after its
		# fuzz time (go test's own default timeout is off when fuzzing).
		(cd "$d" && exec nice -n 19 timeout --kill-after=60 "$(($(fuzzsecs) + 900))" "$b" \
			-test.run='^$' -test.fuzz="^$t\$" -test.fuzztime="$FUZZTIME" \
			-test.parallel="$PARALLEL" -test.fuzzminimizetime="$MINIMIZETIME" -test.fuzzcachedir="$gocache/fuzz/$pkgpath") >"$log" 2>&1 &
		echo $! >"$RESULTS/$name.fuzzpid"
		wait $!
		st=$?
		rm -f "$RESULTS/$name.fuzzpid"
	fi
	end=$(date +%s)
	secs=$((end - start))
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	crasher=$(grep -o 'testdata/fuzz/[^ ]*' "$log" | grep -F "$t/" | tail -1)
	fails=0
	[ "$st" -eq 0 ] || fails=1
	printf '%s\t%s\t%ss\t%s\t%s\t%s\t%s\n' "$d" "$t" "$secs" "${execs:-?}" "$fails" \
		"${crasher:+$d/$crasher}" "exit $st" >"$RESULTS/$name.row"
	summary
}

# fuzzsecs: FUZZTIME in seconds (a Go duration like 10m, 90s or 1h; a count
# of executions such as 1000x counts as 0 s).
fuzzsecs() {
	local v=$FUZZTIME
	case $v in
	*x) echo 0 ;;
	*h) echo $((${v%h} * 3600)) ;;
	*m) echo $((${v%m} * 60)) ;;
	*s) echo "${v%s}" ;;
	*) echo 0 ;;
	esac
}

# summary: rewrite $RESULTS/summary.md from the finished rows.
summary() {
	{
		echo "| Target | Duration | Executions | Failures | New crasher | Exit |"
		echo "|---|---|---|---|---|---|"
		cat "$RESULTS"/*.row 2>/dev/null | sort |
			awk -F'\t' '{printf "| `%s` %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, ($6 == "" ? "—" : "`" $6 "`"), $7}'
	} >"$RESULTS/summary.md.$BASHPID" && mv "$RESULTS/summary.md.$BASHPID" "$RESULTS/summary.md"
}

# Stopping the run (kill -TERM <pid in $RESULTS/run.pid>) stops the
# targets still fuzzing: timeout runs each in its own process group, whose
# id is in $RESULTS/<target>.fuzzpid while it runs.
stop() {
	trap - INT TERM
	for f in "$RESULTS"/*.fuzzpid; do
		[ -f "$f" ] && kill -TERM -- "-$(cat "$f")" 2>/dev/null
	done
	exit 130
}
trap stop INT TERM
echo $$ >"$RESULTS/run.pid"

running=0
while read -r d t; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	echo "$(date -u +%T) start $d $t"
	run_one "$d" "$t" &
	running=$((running + 1))
done <<<"$targets"
wait
echo "finished $(date -u +%FT%TZ)" >>"$RESULTS/commit"
summary
cat "$RESULTS/summary.md"
if cat "$RESULTS"/*.row | awk -F'\t' '$5 != 0 {bad = 1} END {exit bad ? 0 : 1}'; then
	echo "FAIL: some fuzz targets failed (logs in $RESULTS)"
	exit 1
fi
echo "ok: no failures (logs in $RESULTS)"
