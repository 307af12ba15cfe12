#!/bin/sh
# bench-serve.sh measures whole CLI commands through a running `engine
# serve` against the same commands embedded (no server: each opens and
# closes badger itself), on a data dir of LESSONS generated lessons. For
# each command it prints the CPU per run (user + sys, from /usr/bin/time) of
# RUNS runs: served and embedded with engine, embedded with engine-agent
# (which links everything, as the one engine binary did before the split:
# the cost of a command before the memory server), their ratios to served,
# and the server's own CPU per served command (from /proc/PID/stat).
# docs/benchmarks.md ("A short command's CPU") quotes it.
#
#   RUNS     runs of each command in each mode (default 50)
#   LESSONS  lessons in the data dir (default 1000)
set -eu
cd "$(dirname "$0")/.."

RUNS="${RUNS:-50}"
LESSONS="${LESSONS:-1000}"
GO="${GO:-go}"
tmp="$(mktemp -d)"
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

$GO build -o "$tmp/engine" ./cmd/engine
$GO build -o "$tmp/engine-agent" ./cmd/engine-agent
E="$tmp/engine"
A="$tmp/engine-agent"

# An export document: LESSONS lessons over 50 sites.
sh scripts/gen-export.sh "$LESSONS" >"$tmp/export.json"
ENGINE_DATA_DIR="$tmp/served" "$E" import "$tmp/export.json" >/dev/null
ENGINE_DATA_DIR="$tmp/embedded" "$E" import "$tmp/export.json" >/dev/null

ENGINE_DATA_DIR="$tmp/served" "$E" serve 2>"$tmp/serve.log" &
srv=$!
i=0
until [ -S "$tmp/served/engine.sock" ]; do
	i=$((i + 1))
	[ "$i" -gt 600 ] && { echo "engine serve did not start:"; cat "$tmp/serve.log"; exit 1; }
	sleep 0.1
done

tick="$(getconf CLK_TCK)"
server_cpu() { awk '{print $14 + $15}' "/proc/$srv/stat"; }

# mean_cpu DIR BIN ARGS...: the user+sys seconds per run of RUNS runs, timed
# together (/usr/bin/time counts in hundredths: one run is too short for it).
mean_cpu() {
	dir="$1"
	shift
	ENGINE_DATA_DIR="$dir" /usr/bin/time -f "%U %S" -o "$tmp/times" sh -c '
		n=$1; shift; i=0
		while [ "$i" -lt "$n" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done' sh "$RUNS" "$@"
	awk -v r="$RUNS" '{print ($1 + $2) / r}' "$tmp/times"
}

bench() {
	name="$1"
	shift
	"$E" version >/dev/null # warm the page cache
	"$A" version >/dev/null
	ENGINE_DATA_DIR="$tmp/served" "$E" "$@" >/dev/null 2>&1
	ENGINE_DATA_DIR="$tmp/embedded" "$E" "$@" >/dev/null 2>&1
	before="$(server_cpu)"
	served="$(mean_cpu "$tmp/served" "$E" "$@")"
	after="$(server_cpu)"
	embedded="$(mean_cpu "$tmp/embedded" "$E" "$@")"
	agent="$(mean_cpu "$tmp/embedded" "$A" "$@")"
	awk -v n="$name" -v s="$served" -v e="$embedded" -v a="$agent" -v sc="$((after - before))" -v t="$tick" -v r="$RUNS" 'BEGIN {
		printf "%-30s served %5.1f ms  embedded %5.1f ms (%4.1fx)  embedded by engine-agent %5.1f ms (%4.1fx)  server per command %5.2f ms\n", n, s * 1000, e * 1000, (s > 0 ? e / s : 0), a * 1000, (s > 0 ? a / s : 0), sc / t / r * 1000
	}'
}

echo "CPU (user+sys) per whole command, mean of $RUNS, $LESSONS lessons:"
bench "engine version (floor)" version
bench "engine recall error" recall error --command "click e12" --error "element not visible 17" --domain site17.example
bench "engine query lessons --max 10" query lessons --max 10
