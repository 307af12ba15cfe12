#!/bin/sh
# Runs every native Go fuzz target for FUZZTIME each (default 10s), one at a
# time with one worker (the machine is shared). Seed corpora live in each
# package's testdata/fuzz/FuzzX/; a failure writes the failing input there
# too. Exits 1 when any target failed. `make fuzz` runs this.
#
# Usage: FUZZTIME=45s sh scripts/fuzz.sh [TARGET...]
set -u
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}

# package target — every parser of outside input (docs/design/input.md, "Fuzz targets").
TARGETS='
./engine/domain FuzzHost
./engine/memory/lesson FuzzImportRecall
./engine/memory/lesson FuzzLearnRecall
./engine/memory/archive FuzzArchiveImport
./engine/memory/archive FuzzAgentMemory
./engine/memory/trajectory FuzzGoalTemplate
./engine/trust/redact FuzzString
./plugins/scripted FuzzParseRules
./cmd/internal/suite FuzzParse
'

failed=""
echo "$TARGETS" | while read -r pkg target; do
	[ -z "$pkg" ] && continue
	if [ $# -gt 0 ]; then
		case " $* " in *" $target "*) ;; *) continue ;; esac
	fi
	echo "== $target ($pkg, $FUZZTIME)"
	if ! $GO test -run '^$' -fuzz "^$target\$" -fuzztime "$FUZZTIME" -parallel 1 "$pkg"; then
		echo "$target" >>"${TMPDIR:-/tmp}/engine-fuzz-failed.$$"
	fi
done
if [ -s "${TMPDIR:-/tmp}/engine-fuzz-failed.$$" ]; then
	failed=$(cat "${TMPDIR:-/tmp}/engine-fuzz-failed.$$")
	rm -f "${TMPDIR:-/tmp}/engine-fuzz-failed.$$"
	echo "fuzz: failed: $failed" >&2
	exit 1
fi
echo "fuzz: every target passed"
