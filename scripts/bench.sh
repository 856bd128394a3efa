#!/bin/sh
# Builds userlistd and userlistd-bench in release mode and runs the bench; arguments go to the
# bench (e.g. --quick, --only fanout,idle). See BENCHMARKS.md.
set -eu
cd "$(dirname "$0")/.."
# The fan-out section's baseline (Redis PUBLISH): installed here, as setup.sh installs what the tests need.
if ! command -v redis-server >/dev/null 2>&1; then
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq redis-server
fi
swift build -c release --static-swift-stdlib --product userlistd   # as `make release` ships it
swift build -c release --product userlistd-bench
swift build -c release --product userlistd-bench-store
swift build -c release --product userctl   # the bulk section imports through it
exec .build/release/userlistd-bench "$@"
