#!/bin/sh
# install-deps.sh installs what the tests and `make proto` need, only where it
# is missing: Debian's chromium, protoc, and pinned protoc-gen-go /
# protoc-gen-go-grpc in ./bin/tools. Safe to run again and again.
set -eu

cd "$(dirname "$0")/.."
TOOLS="$(pwd)/bin/tools"

# Pinned generator versions: the committed code in plugins/proto was made
# with these, and the staleness test compares against them.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

apt_updated=
apt_install() {
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: need root to apt-get install $*" >&2
		return 1
	fi
	if [ -z "$apt_updated" ]; then
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x /usr/bin/chromium ]; then
	echo "install-deps: installing chromium" >&2
	apt_install chromium
fi

if ! command -v protoc >/dev/null 2>&1; then
	echo "install-deps: installing protobuf-compiler" >&2
	apt_install protobuf-compiler
fi

mkdir -p "$TOOLS"
have_version() { # binary wanted-version
	[ -x "$TOOLS/$1" ] && "$TOOLS/$1" --version 2>/dev/null | grep -q -- "${2#v}"
}
if ! have_version protoc-gen-go "$PROTOC_GEN_GO_VERSION"; then
	echo "install-deps: installing protoc-gen-go $PROTOC_GEN_GO_VERSION" >&2
	GOBIN="$TOOLS" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! have_version protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"; then
	echo "install-deps: installing protoc-gen-go-grpc $PROTOC_GEN_GO_GRPC_VERSION" >&2
	GOBIN="$TOOLS" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi
