#!/bin/sh
# bench-import.sh measures `engine import` of a generated export document
# of LESSONS lessons (50 sites, as bench-serve.sh writes them) into an empty
# data dir: the CPU (user + sys), wall time and peak RSS of the whole
# process, from /usr/bin/time -v, for RUNS runs. The export is generated
# in a temp dir and removed afterwards (never in git). docs/benchmarks.md
# ("Import") quotes it.
#
#   LESSONS  lessons in the export (default 100000)
#   RUNS     runs (default 3)
#   ENGINE   the engine binary to measure (default: built from this tree)
set -eu
cd "$(dirname "$0")/.."

LESSONS="${LESSONS:-100000}"
RUNS="${RUNS:-3}"
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
echo "engine import of $LESSONS lessons ($(wc -c <"$tmp/export.json") bytes), $RUNS runs:"
i=0
while [ "$i" -lt "$RUNS" ]; do
	rm -rf "$tmp/data"
	ENGINE_DATA_DIR="$tmp/data" /usr/bin/time -v -o "$tmp/times" "$E" import "$tmp/export.json" >/dev/null
	awk -F': ' '
		/User time/ {u = $2} /System time/ {s = $2} /Elapsed \(wall/ {w = $2} /Maximum resident/ {m = $2}
		END {printf "cpu %.2f s  wall %s  peak RSS %.0f MiB\n", u + s, w, m / 1024}' "$tmp/times"
	i=$((i + 1))
done
