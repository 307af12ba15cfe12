#!/bin/sh
# install-deps.sh installs what `make demo` or `make test` needs on a fresh
# Debian/Ubuntu machine that has only Go, and only what is missing. Safe to
# run again and again.
#
#   scripts/install-deps.sh demo   a browser for the agent (chromium)
#   scripts/install-deps.sh test   the demo's needs, plus a C compiler (the
#                                  race detector needs cgo), python3 and pip
#                                  (the Python client's tests), node and npm (the
#                                  TypeScript client's tests), protoc and the
#                                  pinned protoc-gen-go / protoc-gen-go-grpc
#                                  in ./bin/tools (the proto staleness test)
#
# A browser is found, in order, at $ENGINE_CHROMIUM, or as chromium,
# chromium-browser, google-chrome or google-chrome-stable on PATH (the same
# search the engine makes); only when none is there is Debian's chromium
# installed. apt-get runs as root, through sudo when not root; it waits for
# the apt lock another apt (say, unattended-upgrades) holds, up to
# ENGINE_APT_LOCK_WAIT seconds (default 600).
set -eu

cd "$(dirname "$0")/.."
TOOLS="$(pwd)/bin/tools"
WHAT="${1:-test}"
case "$WHAT" in
demo | test) ;;
*)
	echo "usage: scripts/install-deps.sh demo|test" >&2
	exit 2
	;;
esac

# Pinned generator versions: the committed code in plugins/proto was made
# with these, and the staleness test compares against them.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

LOCK_WAIT="${ENGINE_APT_LOCK_WAIT:-600}"

say() { echo "install-deps: $*" >&2; }

# as_root runs a command as root: directly, or through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# need_root stops the script with what to do when packages must be installed
# and there is no way to become root.
need_root() {
	[ "$(id -u)" = 0 ] && return 0
	if command -v sudo >/dev/null 2>&1; then
		sudo -n true 2>/dev/null || say "sudo will ask for your password to install $*"
		return 0
	fi
	say "$* must be installed, which needs root: you are not root and there is no sudo."
	say "Run this script as root, or install $* yourself and run it again."
	exit 1
}

# apt_get runs apt-get, waiting for the apt and dpkg locks when another apt
# holds them. DPkg::Lock::Timeout covers the dpkg lock; the lists lock of
# `apt-get update` is not covered by it on older apt, so a failure that names
# a lock is retried until LOCK_WAIT runs out.
apt_get() {
	waited=0
	while :; do
		if out="$(as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$LOCK_WAIT" -qq "$@" 2>&1)"; then
			return 0
		fi
		case "$out" in
		*"Could not get lock"* | *"Unable to acquire"* | *"is another process using it"*)
			if [ "$waited" -ge "$LOCK_WAIT" ]; then
				say "apt is still locked by another process after ${LOCK_WAIT}s:"
				echo "$out" >&2
				return 1
			fi
			[ "$waited" = 0 ] && say "waiting for another apt to release its lock (up to ${LOCK_WAIT}s)"
			sleep 5
			waited=$((waited + 5))
			;;
		*)
			echo "$out" >&2
			return 1
			;;
		esac
	done
}

apt_updated=
apt_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		say "no apt-get on this machine: install $* yourself and run this script again"
		exit 1
	fi
	need_root "$*"
	if [ -z "$apt_updated" ]; then
		apt_get update || exit 1
		apt_updated=1
	fi
	say "installing $*"
	apt_get install -y "$@"
}

# --- a browser -----------------------------------------------------------
have_browser() {
	if [ -n "${ENGINE_CHROMIUM:-}" ]; then
		if [ -x "$ENGINE_CHROMIUM" ]; then
			return 0
		fi
		say "ENGINE_CHROMIUM=$ENGINE_CHROMIUM is not an executable file"
		exit 1
	fi
	for b in chromium chromium-browser google-chrome google-chrome-stable; do
		command -v "$b" >/dev/null 2>&1 && return 0
	done
	return 1
}
if ! have_browser; then
	# Debian names the package chromium; Ubuntu's chromium-browser is a snap
	# wrapper that does not run headless in a container, so Debian's first.
	apt_install chromium || apt_install chromium-browser || exit 1
fi

[ "$WHAT" = demo ] && exit 0

# --- a C compiler, for go test -race ---------------------------------------
if ! command -v "${CC:-cc}" >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
	apt_install gcc libc6-dev || exit 1
fi

# --- python3 and pip, for the Python client's tests (clients/python) -------
if ! command -v python3 >/dev/null 2>&1; then
	apt_install python3 || exit 1
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
	apt_install python3-pip || exit 1
fi

# --- node and npm, for the TypeScript client's tests (clients/typescript) ---
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	apt_install nodejs npm || exit 1
fi

# --- protoc and the pinned generators --------------------------------------
if ! command -v protoc >/dev/null 2>&1; then
	apt_install protobuf-compiler || exit 1
fi

mkdir -p "$TOOLS"
have_version() { # binary wanted-version
	[ -x "$TOOLS/$1" ] && "$TOOLS/$1" --version 2>/dev/null | grep -q -- "${2#v}"
}
if ! have_version protoc-gen-go "$PROTOC_GEN_GO_VERSION"; then
	say "installing protoc-gen-go $PROTOC_GEN_GO_VERSION"
	GOBIN="$TOOLS" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! have_version protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"; then
	say "installing protoc-gen-go-grpc $PROTOC_GEN_GO_GRPC_VERSION"
	GOBIN="$TOOLS" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi
