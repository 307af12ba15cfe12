#!/usr/bin/env bash
# bench-cli.sh measures what a short command costs as a whole process: the
# CPU (user + sys, the kernel's accounting of the finished child) of
# `engine version` (the floor: runtime start-up, package inits, page faults)
# and of `engine recall error` embedded (no server: the process opens the
# data dir itself, read-only) on a data dir of LESSONS lessons, RUNS runs
# each after one warm-up, printed as min and median in milliseconds.
# The binary is built as `make build` builds it; the data dir is made in a
# temp dir and removed afterwards. ARCHITECTURE.md ("Cheap short-lived
# opens") quotes it.
#
#   LESSONS  lessons in the data dir (default 1000)
#   RUNS     runs of each command (default 20)
#   ENGINE   the engine binary to measure (default: built from this tree)
set -euo pipefail
cd "$(dirname "$0")/.."

LESSONS="${LESSONS:-1000}"
RUNS="${RUNS:-20}"
GO="${GO:-go}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

E="${ENGINE:-}"
if [ -z "$E" ]; then
	CGO_ENABLED=0 $GO build -o "$tmp/engine" ./cmd/engine # as make build
	E="$tmp/engine"
fi

sh scripts/gen-export.sh "$LESSONS" >"$tmp/export.json"
export ENGINE_DATA_DIR="$tmp/data"
unset ENGINE_SERVER ENGINE_STORE ENGINE_NAMESPACE
"$E" import "$tmp/export.json" >/dev/null

# ms prints the CPU milliseconds (user + sys) of the reaped children in a
# file that bash's `times` wrote: millisecond digits, where /usr/bin/time
# prints hundredths of a second, too coarse for a 5 ms command.
ms() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60000 + p[2] * 1000 }
		printf "%.3f\n", t }' "$1"
}

# bench NAME ARGS... runs the engine with ARGS RUNS times and prints NAME,
# min and median CPU.
bench() {
	local name="$1" i
	shift
	"$E" "$@" >/dev/null # warm-up: page cache
	: >"$tmp/cpu"
	for ((i = 0; i < RUNS; i++)); do
		# times runs in this shell (a subshell has no children of its
		# own), right before and after the engine: nothing else runs between.
		times >"$tmp/t0"
		"$E" "$@" >/dev/null
		times >"$tmp/t1"
		echo "$(ms "$tmp/t0") $(ms "$tmp/t1")" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$tmp/cpu"
	done
	sort -n "$tmp/cpu" | awk -v name="$name" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%-32s min %5.1f ms  median %5.1f ms  (%d runs)\n", name, v[1], m, NR }'
}

echo "whole-process CPU (user + sys), $LESSONS lessons, $(nproc) cores:"
bench "engine version" version
bench "engine recall error (embedded)" recall error --command click --error "element not visible"
