#!/bin/sh
# Builds userlistd and userlistd-bench in release mode and runs the bench; arguments go to the
# bench (e.g. --quick, --only fanout,idle). See BENCHMARKS.md.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product userlistd   # as `make release` ships it
swift build -c release --product userlistd-bench
swift build -c release --product userlistd-bench-store
swift build -c release --product userctl   # the bulk section imports through it
exec .build/release/userlistd-bench "$@"
