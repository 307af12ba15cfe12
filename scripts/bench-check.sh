#!/usr/bin/env bash
# bench-check.sh runs the key benchmarks on this tree and on an older
# revision, in turns, compares them with benchstat and fails on a clear
# regression. `make bench-check` runs it (installing benchstat first); run
# it before each merge.
#
# The benchmarks:
#   lesson  warm recall on an error at 1k and 100k lessons, grown and skewed
#           (BenchmarkRecallIndexWarm; its 100k stores are built once into
#           ENGINE_BENCH_CACHE and read there in place)
#   agent   the engine's own cost of a step in a 300-step run
#           (BenchmarkStepOverhead)
#   api     a server under a mixed read/write load through the HTTP handler
#           (BenchmarkMixedLoad)
#   cli     one `engine recall error`, embedded, on a data dir of 1k and of
#           100k lessons (CLIRecallError), the mean of BENCH_CLI_RUNS
#           commands
# Each is measured in CPU time (user + sys, the kernel's accounting of the
# finished processes), cpu-sec/op: on a machine other work shares, a wall
# clock measures how often the benchmark waited for a core (one revision's
# wall-time samples within one run spread over 2.5×), while the CPU a
# process used hardly depends on it. A Go benchmark runs twice per sample,
# for N/10 ops and for N (N in GO_BENCHES below), and its cpu-sec/op is the
# difference over 0.9 N ops: the set-up (a store opened, a memory seeded)
# cancels. Its own wall sec/op, B/op and allocs/op are printed beside it.
#
# What it compares with: BENCH_BASE when given (any revision: main, a tag,
# $(git merge-base main HEAD)); else the commit before the tree's, which is
# HEAD when the tree has uncommitted changes and HEAD~1 when it has none.
# Why a build of the base, not a results file kept per commit: figures
# from another run were taken under another load (on a shared machine the
# speed comes and goes by tens of percent within minutes) or on another
# machine altogether (a clone), and comparing them would report the load.
# So the base is checked out in a temporary git worktree and built, and the
# two sides run here in turns, one sample of each benchmark per side per
# round (base head, head base, ...), for BENCH_ROUNDS rounds: both meet the
# same load, and what differs is the code. The price is building the base
# too (go's build cache keeps most of it) and twice the running time.
#
# The rule: it fails when benchstat finds a benchmark's cpu-sec/op on this
# tree more than BENCH_MAX_SLOWDOWN percent above the base's AND the
# difference significant at BENCH_ALPHA (default 0.01: p from benchstat's
# Mann-Whitney U test over the rounds' samples; a change within the noise
# prints as ~ and passes). 0.01 rather than benchstat's 0.05 because eight
# benchmarks are judged at once: at 0.05 one of eight changes that are only
# noise is called significant in about a third of the runs. Wall time,
# bytes and allocations are printed, not judged. It also fails when, on
# this tree, a short command on 100k lessons costs more than
# BENCH_CLI_MAX_RATIO times one on 1k (the medians of the rounds). A
# benchmark the base does not have, or that does not build there, is
# printed with no comparison.
#
# Each side's `engine` imports its own data dirs (scripts/gen-export.sh's
# lessons): how a revision writes a store is part of what a command on it
# costs. They are cached in ENGINE_BENCH_CACHE/cli under the binary's
# SHA-256 (builds are -trimpath, so a revision builds the same binary from
# any checkout); the four most recently used binaries' dirs are kept.
#
#   BENCH_BASE           the revision to compare with (default: see above)
#   BENCH_ROUNDS         samples of each benchmark on each side (default 8)
#   BENCH_MAX_SLOWDOWN   the slowdown in percent that fails (default 10)
#   BENCH_ALPHA          the significance it takes (default 0.01)
#   BENCH_CLI_MAX_RATIO  the largest cost of a command on 100k lessons over
#                        one on 1k (default 1.5)
#   BENCH_CLI_RUNS       commands per sample of the cli benchmark (default 20)
#   BENCH_OUT            where base.txt, head.txt and benchstat.txt are
#                        written (default bin/bench-check)
#   BENCHSTAT            the benchstat binary (default bin/tools/benchstat)
#   ENGINE_BENCH_CACHE   the built stores (default engine-bench in the
#                        user's cache dir)
#
# Exit status: 0 no regression, 1 a regression, 2 it could not measure.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

GO="${GO:-go}"
ROUNDS="${BENCH_ROUNDS:-8}"
MAX_SLOWDOWN="${BENCH_MAX_SLOWDOWN:-10}"
ALPHA="${BENCH_ALPHA:-0.01}"
CLI_MAX_RATIO="${BENCH_CLI_MAX_RATIO:-1.5}"
CLI_RUNS="${BENCH_CLI_RUNS:-20}"
OUT="${BENCH_OUT:-bin/bench-check}"
BENCHSTAT="${BENCHSTAT:-bin/tools/benchstat}"
# The cache dir as os.UserCacheDir finds it, for the lesson benchmarks and
# the data dirs alike.
if [ -z "${ENGINE_BENCH_CACHE:-}" ]; then
	if [ -n "${XDG_CACHE_HOME:-}" ]; then
		ENGINE_BENCH_CACHE="$XDG_CACHE_HOME/engine-bench"
	elif [ -n "${HOME:-}" ]; then
		ENGINE_BENCH_CACHE="$HOME/.cache/engine-bench"
	else
		echo "bench-check: no cache dir: set ENGINE_BENCH_CACHE" >&2
		exit 2
	fi
fi
export ENGINE_BENCH_CACHE
unset ENGINE_DATA_DIR ENGINE_SERVER ENGINE_TOKEN ENGINE_STORE ENGINE_NAMESPACE ENGINE_BENCH_1M

# The Go benchmarks: package, -bench regexp naming one benchmark, ops per
# sample (about half a second of work each).
GO_BENCHES='
lesson ^BenchmarkRecallIndexWarm$/^grown$/^n=1000$/^error$ 100000
lesson ^BenchmarkRecallIndexWarm$/^grown$/^n=100000$/^error$ 100000
lesson ^BenchmarkRecallIndexWarm$/^skewed$/^n=1000$/^error$ 100000
lesson ^BenchmarkRecallIndexWarm$/^skewed$/^n=100000$/^error$ 100000
agent ^BenchmarkStepOverhead$ 300
api ^BenchmarkMixedLoad$ 4000
'
CLI_SIZES="1000 100000"

log() { echo "bench-check: $*" >&2; }
die() {
	log "$*"
	exit 2
}

[ -x "$BENCHSTAT" ] || die "no benchstat at $BENCHSTAT (make bench-check installs it)"
case "$ROUNDS" in '' | *[!0-9]*) die "BENCH_ROUNDS=$ROUNDS: a number" ;; esac
[ "$ROUNDS" -ge 5 ] || die "BENCH_ROUNDS=$ROUNDS: at least 5 (with fewer samples no difference is significant at 0.01)"

if [ -n "${BENCH_BASE:-}" ]; then
	base_ref="$BENCH_BASE"
elif [ -n "$(git status --porcelain)" ]; then
	base_ref=HEAD
else
	base_ref=HEAD~1
fi
base_rev="$(git rev-parse --verify --quiet "$base_ref^{commit}")" ||
	die "no revision $base_ref to compare with (a shallow clone? git fetch --deepen=1, or set BENCH_BASE)"
head_desc="$(git rev-parse --short HEAD)"
[ -z "$(git status --porcelain)" ] || head_desc="$head_desc + uncommitted changes"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-check.XXXXXX")"
cleanup() {
	git -C "$root" worktree remove --force "$tmp/base-src" >/dev/null 2>&1 || true
	rm -rf "$tmp"
	git -C "$root" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start=$SECONDS

log "base $(git rev-parse --short "$base_rev") ($base_ref), head $head_desc; $ROUNDS rounds"
git worktree add --quiet --detach "$tmp/base-src" "$base_rev"
src_base="$tmp/base-src"
src_head="$root"

# pkgs NAME lists where the benchmark NAME's package is, newest layout
# first, so that a base from before a package moved still has a baseline.
pkgs() {
	case "$1" in
	lesson) echo engine/memory/lesson engine/lesson ;;
	agent) echo engine/agent ;;
	api) echo engine/api ;;
	esac
}

# build SIDE SRC builds into $tmp/SIDE the engine binary (as make build
# does) and the test binary of each benchmark's package. Both are built
# -trimpath: the base's temporary checkout then hits go's build cache (a
# path in the binary is part of a package's cache key), and a revision's
# engine is the same file whichever checkout built it. Whatever does not
# build is fatal for the head and has no baseline for the base.
build() {
	local side="$1" src="$2" out="$tmp/$1" name pkg
	mkdir -p "$out"
	if ! (cd "$src" && CGO_ENABLED=0 $GO build -trimpath -o "$out/engine" ./cmd/engine) 2>"$out/build.err"; then
		cat "$out/build.err" >&2
		[ "$side" = base ] || die "head: cmd/engine does not build"
		log "base: cmd/engine does not build: no baseline for the cli benchmark"
		rm -f "$out/engine"
	fi
	for name in lesson agent api; do
		for pkg in $(pkgs "$name"); do
			[ -d "$src/$pkg" ] || continue
			if (cd "$src" && $GO test -c -trimpath -o "$out/$name.test" "./$pkg") 2>"$out/build.err"; then
				echo "$pkg" >"$out/$name.pkg"
			else
				cat "$out/build.err" >&2
				[ "$side" = base ] || die "head: the tests of $pkg do not build"
				log "base: the tests of $pkg do not build: no baseline for its benchmarks"
			fi
			break
		done
	done
}

# cli_data SIDE N prints the data dir of N lessons that SIDE's engine
# imported, importing it first when the cache has none.
cli_data() {
	local bin="$tmp/$1/engine" n="$2" sum dir
	sum="$(sha256sum "$bin" | cut -c1-16)"
	dir="$ENGINE_BENCH_CACHE/cli/$sum/lessons-$n"
	if [ ! -f "$dir.ok" ]; then
		log "$1: importing $n lessons into $dir"
		rm -rf "$dir" "$dir.build"
		mkdir -p "$dir.build"
		sh scripts/gen-export.sh "$n" >"$tmp/export.json"
		ENGINE_DATA_DIR="$dir.build" "$bin" import "$tmp/export.json" >/dev/null 2>"$tmp/import.err" || {
			cat "$tmp/import.err" >&2
			rm -rf "$dir.build"
			return 1
		}
		mv "$dir.build" "$dir"
		: >"$dir.ok"
	fi
	touch "$ENGINE_BENCH_CACHE/cli/$sum"
	echo "$dir"
}

# ms FILE prints the CPU milliseconds (user + sys) of the reaped children
# in a file that bash's `times` wrote (millisecond digits).
ms() {
	awk 'NR == 2 {
		for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60000 + p[2] * 1000 }
		printf "%.3f\n", t }' "$1"
}

# cli_sample BIN DIR prints the mean CPU nanoseconds of one `engine recall
# error` on DIR over CLI_RUNS commands, after one that warms the page cache.
cli_sample() {
	local bin="$1" i
	export ENGINE_DATA_DIR="$2"
	"$bin" recall error --command click --error "element not visible" >/dev/null || return 1
	# times runs in this shell, right before and after the commands.
	times >"$tmp/t0"
	for ((i = 0; i < CLI_RUNS; i++)); do
		"$bin" recall error --command click --error "element not visible" >/dev/null || return 1
	done
	times >"$tmp/t1"
	unset ENGINE_DATA_DIR
	echo "$(ms "$tmp/t0") $(ms "$tmp/t1")" | awk -v n="$CLI_RUNS" '{ printf "%d\n", ($2 - $1) * 1e6 / n }'
}

# gobench SIDE NAME REGEXP N runs SIDE's test binary of NAME for the one
# benchmark REGEXP names, for N/10 ops and for N, and prints the line of
# the N-op run with cpu-ns/op added: the two runs' difference in CPU over
# their difference in ops. What is done once, the process's start, the
# benchmark's set-up and (for a benchmark on b.N) the 1-op run the testing
# package makes first, cancels.
gobench() {
	local side="$1" name="$2" re="$3" n="$4" m src line why
	m=$((n / 10))
	[ -x "$tmp/$side/$name.test" ] || return 0
	! grep -Fxq -- "$re" "$tmp/$side/skip" 2>/dev/null || return 0
	if [ "$side" = base ]; then src="$src_base"; else src="$src_head"; fi
	src="$src/$(cat "$tmp/$side/$name.pkg")"
	# times runs in this shell, right before and after each run.
	why="failed"
	times >"$tmp/t0"
	if (cd "$src" && exec "$tmp/$side/$name.test" -test.run='^$' -test.bench="$re" -test.benchtime="${m}x" \
		-test.count=1 -test.timeout=10m) >"$tmp/bench.out" 2>&1 &&
		times >"$tmp/t1" &&
		(cd "$src" && exec "$tmp/$side/$name.test" -test.run='^$' -test.bench="$re" -test.benchtime="${n}x" \
			-test.count=1 -test.benchmem -test.timeout=10m) >"$tmp/bench.out" 2>&1 &&
		times >"$tmp/t2" && why="matches no benchmark" &&
		line="$(grep -E '^Benchmark' "$tmp/bench.out")" && why="matches more than one benchmark" &&
		[ "$(echo "$line" | wc -l)" = 1 ]; then
		echo "pkg: $name"
		echo "$line $(ms "$tmp/t0") $(ms "$tmp/t1") $(ms "$tmp/t2")" |
			awk -v n="$n" -v m="$m" '{ t2 = $NF; t1 = $(NF - 1); t0 = $(NF - 2); NF -= 3
				printf "%s %d cpu-ns/op\n", $0, ((t2 - t1) - (t1 - t0)) * 1e6 / (n - m) }'
		return 0
	fi
	[ "$why" != failed ] || cat "$tmp/bench.out" >&2
	[ "$side" = base ] || die "head: $name: $re $why"
	log "base: $name: $re $why: no baseline for it"
	echo "$re" >>"$tmp/$side/skip"
}

# sample SIDE appends one sample of every benchmark SIDE has to SIDE.txt.
sample() {
	local side="$1" name re n ns
	{
		while read -r name re n; do
			[ -z "$name" ] || gobench "$side" "$name" "$re" "$n"
		done <<<"$GO_BENCHES"
		if [ -x "$tmp/$side/engine" ]; then
			# A fresh copy each time: where a binary's pages sit in the
			# page cache moved its CPU by 5% in one measurement.
			cp "$tmp/$side/engine" "$tmp/engine.run"
			echo "pkg: cli"
			for n in $CLI_SIZES; do
				if ! ns="$(cli_sample "$tmp/engine.run" "$(cat "$tmp/$side/data-$n")")"; then
					[ "$side" = base ] || die "head: engine recall error on $n lessons failed"
					log "base: engine recall error on $n lessons failed: no baseline for the cli benchmark"
					rm -f "$tmp/$side/engine"
					break
				fi
				echo "BenchmarkCLIRecallError/lessons=$n $CLI_RUNS $ns cpu-ns/op"
			done
		fi
	} >>"$tmp/$side.txt"
}

log "building the head"
build head "$src_head"
log "building the base"
build base "$src_base"
for side in base head; do
	[ -x "$tmp/$side/engine" ] || continue
	for n in $CLI_SIZES; do
		if ! cli_data "$side" "$n" >"$tmp/$side/data-$n"; then
			[ "$side" = base ] || die "head: engine import of $n lessons failed"
			log "base: engine import of $n lessons failed: no baseline for the cli benchmark"
			rm -f "$tmp/$side/engine"
			break
		fi
	done
done
# Keep the data dirs of the four binaries used last.
ls -1t "$ENGINE_BENCH_CACHE/cli" 2>/dev/null | grep -E '^[0-9a-f]{16}$' | tail -n +5 |
	while read -r old; do rm -rf "${ENGINE_BENCH_CACHE:?}/cli/$old"; done

: >"$tmp/base.txt"
: >"$tmp/head.txt"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="base head"; else order="head base"; fi
	log "round $r of $ROUNDS ($order), $((SECONDS - start)) s in"
	for side in $order; do
		sample "$side"
	done
done

mkdir -p "$OUT"
cp "$tmp/base.txt" "$tmp/head.txt" "$OUT/"
"$BENCHSTAT" -alpha "$ALPHA" base="$OUT/base.txt" head="$OUT/head.txt" >"$OUT/benchstat.txt"
cat "$OUT/benchstat.txt"
echo

fail=0
# benchstat's CSV: a header row per table (",sec/op,CI,sec/op,CI,vs base,P")
# names the unit; a row is name, base, CI, head, CI, change (~ when not
# significant), p.
if ! "$BENCHSTAT" -alpha "$ALPHA" -format csv base="$OUT/base.txt" head="$OUT/head.txt" 2>/dev/null |
	awk -F, -v max="$MAX_SLOWDOWN" '
	$1 == "" && $2 ~ /\/op$/ { unit = $2; next }
	unit == "cpu-sec/op" && $1 != "geomean" && $6 ~ /^\+[0-9.]+%$/ {
		d = substr($6, 2) + 0
		if (d > max) { printf "bench-check: slower: %s %s %s (%s)\n", $1, unit, $6, $7; bad++ }
	}
	END { exit bad > 0 }'; then
	log "a significant slowdown of more than $MAX_SLOWDOWN% against $base_ref"
	fail=1
fi

# The commands' medians on this tree: 100k lessons against 1k.
median() {
	grep -E "^BenchmarkCLIRecallError/lessons=$1 " "$OUT/head.txt" | awk '{ print $3 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
small="$(median 1000)"
large="$(median 100000)"
if [ -n "$small" ] && [ -n "$large" ]; then
	if ! awk -v s="$small" -v l="$large" -v max="$CLI_MAX_RATIO" 'BEGIN {
		printf "bench-check: engine recall error, CPU median: %.1f ms on 1k lessons, %.1f ms on 100k: %.2f×\n", s / 1e6, l / 1e6, l / s
		exit !(l <= max * s) }'; then
		log "a command on 100k lessons costs more than $CLI_MAX_RATIO× one on 1k"
		fail=1
	fi
fi

log "$((SECONDS - start)) s; samples and benchstat's report in $OUT"
if [ "$fail" = 0 ]; then log "no regression against $base_ref"; fi
exit "$fail"
