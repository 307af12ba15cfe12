#!/usr/bin/env bash
# serve-starts.sh starts `engine serve --listen 127.0.0.1:0` STARTS times on
# fresh data dirs, PARALLEL at a time, beside a loop of short commands
# (`engine lessons add`, `engine query lessons`) on a data dir of their
# own, and prints how long each start took to make its socket (p50, p99,
# max, in ms). A start that has no socket after SLOW_MS gets SIGQUIT: its
# goroutine dump is kept in OUT/slow.*.txt and the script exits 1. It
# looks for a start that hangs (docs/design/clients.md).
#
#   STARTS    starts per starter (default 300)
#   PARALLEL  starters at once (default 2)
#   SLOW_MS   the start time that takes a dump (default 5000)
#   OUT       where the dumps go (default: a temp dir, printed)
set -eu
cd "$(dirname "$0")/.."

STARTS="${STARTS:-300}"
PARALLEL="${PARALLEL:-2}"
SLOW_MS="${SLOW_MS:-5000}"
work="$(mktemp -d)"
OUT="${OUT:-$work/out}"
mkdir -p "$OUT" "$work/bin"
go build -o "$work/bin/" ./cmd/engine ./cmd/engine-agent
bin="$work/bin"

load_pid=
cleanup() {
	if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
	rm -rf "$work/bin" "$work"/d.* "$work/load"
}
trap cleanup EXIT

# The load: short commands on their own data dir, until killed.
(
	export ENGINE_DATA_DIR="$work/load"
	while :; do
		"$bin/engine" lessons add --lesson "Accept the cookie banner $RANDOM." --category best_practice >/dev/null 2>&1 || true
		"$bin/engine" query lessons >/dev/null 2>&1 || true
	done
) &
load_pid=$!

ms() { echo $(( $(date +%s%N) / 1000000 )); }

starter() {
	local id=$1 i d pid t0 now
	for i in $(seq 1 "$STARTS"); do
		d="$(mktemp -d "$work/d.XXXXXX")"
		t0=$(ms)
		ENGINE_DATA_DIR="$d" "$bin/engine" serve --listen 127.0.0.1:0 2>"$d/stderr" &
		pid=$!
		while [ ! -S "$d/engine.sock" ]; do
			now=$(ms)
			if [ $((now - t0)) -gt "$SLOW_MS" ]; then
				kill -QUIT "$pid" 2>/dev/null || true
				wait "$pid" 2>/dev/null || true
				cp "$d/stderr" "$OUT/slow.$id.$i.txt"
				echo "slow $id.$i: no socket after ${SLOW_MS} ms; dump in $OUT/slow.$id.$i.txt" >&2
				break
			fi
			if ! kill -0 "$pid" 2>/dev/null; then
				echo "exited $id.$i: $(cat "$d/stderr")" >&2
				break
			fi
			sleep 0.01
		done
		echo $(($(ms) - t0)) >>"$OUT/times"
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		rm -rf "$d"
	done
}

pids=()
for p in $(seq 1 "$PARALLEL"); do
	starter "$p" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

sort -n "$OUT/times" | awk '{a[NR]=$1} END {p50=int(NR*0.5)+1; p99=int(NR*0.99)+1; if (p99>NR) p99=NR; printf "starts %d: p50 %d ms, p99 %d ms, max %d ms\n", NR, a[p50], a[p99], a[NR]}'
if ls "$OUT"/slow.* >/dev/null 2>&1; then
	echo "slow starts: dumps in $OUT" >&2
	exit 1
fi
