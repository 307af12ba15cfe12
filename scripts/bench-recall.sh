#!/bin/sh
# bench-recall.sh runs the lesson benchmarks (recall on error, grown and
# skewed; recall on domain; Tier 1; record) and the seed JSON baseline at
# 1k, 10k, 100k and 1M lessons in one go, and writes a markdown report:
# per n, shape and op the ns/op and allocs/op, the seed file's ns/op and
# the ratio seed/engine, and flatness, time(n)/time(1k). docs/benchmarks.md
# ("Lesson recall") quotes it.
#
# The 1M stores and the 1M seed file are built once (minutes) and kept in
# ENGINE_BENCH_CACHE (default: engine-bench in the user's cache dir); see
# engine/memory/lesson/bench_cache_test.go.
#
#   bench-recall.sh [REPORT [BENCH_OUTPUT]]
#   REPORT        the markdown file to write (default bench-recall.md in a temp dir)
#   BENCH_OUTPUT  parse this `go test -bench -benchmem` output instead of running the benchmarks
#   BENCHTIME     -benchtime (default 1s)
set -eu
cd "$(dirname "$0")/.."

GO="${GO:-go}"
BENCHTIME="${BENCHTIME:-1s}"
out="${1:-$(mktemp -d)/bench-recall.md}"
raw="${2:-}"
mkdir -p "$(dirname "$out")"
if [ -z "$raw" ]; then
	raw="${out%.md}.txt"
	ENGINE_BENCH_1M=1 $GO test ./engine/memory/lesson -run '^$' -timeout 0 -benchmem -benchtime "$BENCHTIME" \
		-bench '^Benchmark(RecallError|RecallDomain|Tier1|Record|SeedBaseline)$' >"$raw" || {
		cat "$raw" >&2
		exit 1
	}
fi

awk '
function human(ns) {
	if (ns >= 1e9) return sprintf("%.2f s", ns / 1e9)
	if (ns >= 1e6) return sprintf("%.1f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%d ns", ns)
}
function ratio(x,   s) {
	if (x < 100) return sprintf("%.1f×", x)
	s = sprintf("%d", x)
	while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s)
	return s "×"
}
/^pkg: / { inpkg = ($2 ~ /\/engine\/lesson$/) }
inpkg && /^Benchmark/ && / ns\/op/ {
	name = $1
	sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	k = split(name, p, "/")
	n = p[k]; sub(/^n=/, "", n)
	ns = ""; al = ""
	for (i = 2; i <= NF; i++) {
		if ($i == "ns/op") ns = $(i - 1)
		if ($i == "allocs/op") al = $(i - 1)
	}
	if (p[1] == "SeedBaseline") { seed[p[2], n] = ns; next }
	shape = "grown"; op = ""
	if (p[1] == "RecallError") { op = "recall_error"; shape = p[2] }
	if (p[1] == "RecallDomain") op = "recall_domain"
	if (p[1] == "Tier1") op = "tier1"
	if (p[1] == "Record") op = "record"
	if (op == "") next
	key = op SUBSEP shape
	if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
	if (!((key, n) in t)) { sizes[key] = sizes[key] " " n }
	t[key, n] = ns; a[key, n] = al
}
inpkg && /bench cache: built/ { sub(/^[ \t]*[^ ]+: /, ""); built[++nb] = $0 }
/^cpu:/ { cpu = $0 }
END {
	print "# Lesson recall and record, 1k…1M lessons, against the seed JSON file"
	print ""
	print "One run, `go test ./engine/memory/lesson -bench -benchmem`" (cpu != "" ? ", " cpu : "") "."
	print "ratio = seed ns/op ÷ engine ns/op (the seed file holds the grown shape);"
	print "×1k = ns/op ÷ ns/op at 1k lessons for the same shape and op (flatness)."
	print ""
	print "| n | shape | op | ns/op | time/op | allocs/op | seed ns/op | ratio | ×1k |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (j = 1; j <= nk; j++) {
		key = order[j]; split(key, kp, SUBSEP)
		m = split(sizes[key], ns_, " ")
		for (i = 1; i <= m; i++) {
			n = ns_[i]; v = t[key, n]
			s = ((kp[1], n) in seed) ? seed[kp[1], n] : ""
			r = (s != "" && v > 0) ? ratio(s / v) : ""
			f = ((key, 1000) in t && t[key, 1000] > 0) ? sprintf("%.2f", v / t[key, 1000]) : ""
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", n, kp[2], kp[1], v, human(v), a[key, n], s, r, f
		}
	}
	print ""
	print "Flatness, time(1M) ÷ time(1k):"
	print ""
	for (j = 1; j <= nk; j++) {
		key = order[j]; split(key, kp, SUBSEP)
		if ((key, 1000) in t && (key, 1000000) in t)
			printf "- %s (%s): %.2f×\n", kp[1], kp[2], t[key, 1000000] / t[key, 1000]
	}
	if (nb) {
		print ""
		print "Cached stores built in this run:"
		print ""
		for (i = 1; i <= nb; i++) print "- " built[i]
	}
}' "$raw" >"$out"
echo "bench-recall: report in $out (raw output in $raw)"
