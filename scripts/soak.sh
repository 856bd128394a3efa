#!/bin/sh
# The soak (issue #17): builds the release userlistd and userctl (as `make release` ships them)
# and runs scripts/soak.py: 10 minutes of churning clients against the real daemon on temporary
# paths, RSS / descriptors / sessions each minute, then the slopes and a verdict.
#   scripts/soak.sh            10 minutes      scripts/soak.sh --quick      2 minutes
#   scripts/soak.sh --minutes 30 --warmup 3
# Everything it starts (daemon, userctl watch processes) is stopped when it ends or is interrupted.
set -eu
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product userlistd
swift build -c release --static-swift-stdlib --product userctl
python3 scripts/soak.py --daemon .build/release/userlistd --userctl .build/release/userctl "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' INT TERM
wait "$pid"
