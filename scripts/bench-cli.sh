#!/usr/bin/env bash
# bench-cli.sh measures what a short command costs as a whole process: the
# CPU (user + sys, the kernel's accounting of the finished child) of
# `engine version` (the floor: runtime start-up, package inits, page faults)
# and of `engine recall error` embedded (no server: the process opens the
# data dir itself, read-only) on a data dir of LESSONS lessons, RUNS runs
# each after one warm-up, printed as min and median in milliseconds.
# The binary is built as `make build` builds it; the data dir is made in a
# temp dir and removed afterwards. docs/benchmarks.md ("A short command's
# CPU") quotes it.
#
# With BASE (an older engine binary) each run is a pair, BASE and ENGINE in
# turn (which goes first alternates), on the same data dir, and the ratio
# ENGINE / BASE is printed too: of the pairs' totals, and the median of
# the per-pair ratios. On a shared machine whose load comes and goes, a
# paired ratio resolves a change a median of separate runs does not. Both
# binaries are copied into the temp dir first: a binary's place in the page
# cache alone moved its CPU by 5 % in one measurement.
#
#   LESSONS  lessons in the data dir (default 1000)
#   RUNS     runs of each command (default 20)
#   ENGINE   the engine binary to measure (default: built from this tree)
#   BASE     an engine binary to compare it with (default: none)
set -euo pipefail
cd "$(dirname "$0")/.."

LESSONS="${LESSONS:-1000}"
RUNS="${RUNS:-20}"
GO="${GO:-go}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

if [ -n "${ENGINE:-}" ]; then
	cp "$ENGINE" "$tmp/engine"
else
	CGO_ENABLED=0 $GO build -o "$tmp/engine" ./cmd/engine # as make build
fi
E="$tmp/engine"
B=""
if [ -n "${BASE:-}" ]; then
	cp "$BASE" "$tmp/base"
	B="$tmp/base"
fi

sh scripts/gen-export.sh "$LESSONS" >"$tmp/export.json"
export ENGINE_DATA_DIR="$tmp/data"
unset ENGINE_SERVER ENGINE_STORE ENGINE_NAMESPACE
"$E" import "$tmp/export.json" >/dev/null 2>&1

# ms prints the CPU milliseconds (user + sys) of the reaped children in a
# file that bash's `times` wrote: millisecond digits, where /usr/bin/time
# prints hundredths of a second, too coarse for a 5 ms command.
ms() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60000 + p[2] * 1000 }
		printf "%.3f\n", t }' "$1"
}

# cpu BIN ARGS... runs BIN with ARGS once and prints its CPU milliseconds.
cpu() {
	# times runs in this shell (a subshell has no children of its own),
	# right before and after the engine: nothing else runs between.
	times >"$tmp/t0"
	"$@" >/dev/null
	times >"$tmp/t1"
	echo "$(ms "$tmp/t0") $(ms "$tmp/t1")" | awk '{ printf "%.3f\n", $2 - $1 }'
}

# summary NAME FILE prints NAME and the min and median of FILE's numbers.
summary() {
	sort -n "$2" | awk -v name="$1" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%-40s min %5.1f ms  median %5.1f ms  (%d runs)\n", name, v[1], m, NR }'
}

# bench NAME ARGS... runs the engine with ARGS RUNS times (paired with BASE
# when given) and prints NAME, min and median CPU (and the ratio).
bench() {
	local name="$1" i
	shift
	"$E" "$@" >/dev/null # warm-up: page cache
	[ -z "$B" ] || "$B" "$@" >/dev/null
	: >"$tmp/cpu"
	: >"$tmp/base-cpu"
	for ((i = 0; i < RUNS; i++)); do
		if [ -z "$B" ]; then
			cpu "$E" "$@" >>"$tmp/cpu"
		elif ((i % 2)); then
			cpu "$E" "$@" >>"$tmp/cpu"
			cpu "$B" "$@" >>"$tmp/base-cpu"
		else
			cpu "$B" "$@" >>"$tmp/base-cpu"
			cpu "$E" "$@" >>"$tmp/cpu"
		fi
	done
	if [ -z "$B" ]; then
		summary "$name" "$tmp/cpu"
		return
	fi
	summary "$name, BASE" "$tmp/base-cpu"
	summary "$name, ENGINE" "$tmp/cpu"
	local total pairs
	total=$(paste "$tmp/base-cpu" "$tmp/cpu" | awk '{ b += $1; e += $2 } END { printf "%.2f", e / b }')
	pairs=$(paste "$tmp/base-cpu" "$tmp/cpu" | awk '$1 > 0 { print $2 / $1 }' | sort -g | awk '{ v[NR] = $1 } END {
		printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	printf "%-40s ENGINE / BASE: %s of the totals, %s median of the pairs\n" "" "$total" "$pairs"
}

echo "whole-process CPU (user + sys), $LESSONS lessons, $(nproc) cores:"
bench "engine version" version
bench "engine recall error (embedded)" recall error --command click --error "element not visible"
