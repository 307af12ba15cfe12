#!/bin/sh
# stress.sh runs the tests most exposed to timing (real chromium, plugin
# subprocesses, background runs in scenarios, store locks) again and again
# while every core is kept busy by a load generator, and reports how many
# rounds passed. A flaky test shows up here long before it blocks a landing.
#
#   STRESS_COUNT  rounds (default 20)
#   STRESS_PKGS   packages (default: the timing-exposed ones below)
#   STRESS_RUN    -run pattern (default: all tests of those packages)
#   STRESS_LOAD   busy loops beside the tests (default: one per core)
set -u
cd "$(dirname "$0")/.."

COUNT="${STRESS_COUNT:-20}"
PKGS="${STRESS_PKGS:-./plugins/loader ./plugins/chromedp ./cmd/engine ./cmd/internal/agentcmd ./engine/agent ./engine/server/inspect ./kv}"
RUN="${STRESS_RUN:-.}"
LOAD="${STRESS_LOAD:-$(nproc)}"
LOG="${STRESS_LOG:-bin/stress.log}"
mkdir -p "$(dirname "$LOG")"
: >"$LOG"

# The load: busy loops we own, stopped however this script ends.
loaders=""
stop_load() {
	[ -n "$loaders" ] && kill $loaders 2>/dev/null
	wait 2>/dev/null
}
trap stop_load EXIT
trap 'exit 130' INT TERM
i=0
while [ "$i" -lt "$LOAD" ]; do
	sh -c 'while :; do :; done' &
	loaders="$loaders $!"
	i=$((i + 1))
done

# Build once, so every round times the tests and not the compiler.
GORACE=atexit_sleep_ms=0 go test -race -count=1 -run '^$' $PKGS >/dev/null || exit 1

passed=0
failed=0
round=1
while [ "$round" -le "$COUNT" ]; do
	start=$(date +%s)
	if GORACE=atexit_sleep_ms=0 go test -race -count=1 -run "$RUN" $PKGS >>"$LOG" 2>&1; then
		passed=$((passed + 1))
		result=ok
	else
		failed=$((failed + 1))
		result=FAILED
	fi
	echo "stress: round $round/$COUNT $result ($(($(date +%s) - start))s, load $LOAD)"
	round=$((round + 1))
done
echo "stress: $passed passed, $failed failed (log: $LOG)"
grep -E '^(--- FAIL|FAIL|panic:)' "$LOG" | sort | uniq -c | sort -rn | head -20
[ "$failed" -eq 0 ]
