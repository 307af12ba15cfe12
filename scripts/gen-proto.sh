#!/bin/sh
# gen-proto.sh regenerates the Go code for plugins/proto/v1/plugin.proto with
# the pinned generators that scripts/install-deps.sh puts in ./bin/tools.
# The output is committed; plugins/proto/v1's test fails when it is stale.
set -eu
cd "$(dirname "$0")/.."
TOOLS="$(pwd)/bin/tools"
if [ ! -x "$TOOLS/protoc-gen-go" ] || [ ! -x "$TOOLS/protoc-gen-go-grpc" ] || ! command -v protoc >/dev/null 2>&1; then
	./scripts/install-deps.sh
fi
OUT="${1:-plugins/proto}"
PATH="$TOOLS:$PATH" protoc -I plugins/proto \
	--go_out="$OUT" --go_opt=paths=source_relative \
	--go-grpc_out="$OUT" --go-grpc_opt=paths=source_relative \
	v1/plugin.proto
