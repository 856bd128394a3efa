#!/usr/bin/env bash
# The main job on the embedded default store: build, start userlistd with sample data on a
# per-user socket, and open the userctl terminal UI on it. The daemon keeps running afterwards
# (stop it with: kill $(cat "$DEMO_DIR/userlistd.pid")).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product userlistd
swift build --product userctl
DEMO_DIR=${DEMO_DIR:-${XDG_RUNTIME_DIR:-/tmp}/userlistd-demo}
mkdir -p "$DEMO_DIR"
sock="$DEMO_DIR/userlistd.sock"
if ! .build/debug/userctl --socket "$sock" --no-spawn status >/dev/null 2>&1; then
  .build/debug/userlistd --socket "$sock" --database "$DEMO_DIR/users.sqlite3" \
    --state-directory "$DEMO_DIR/state" --sample-data 5000 2>"$DEMO_DIR/userlistd.log" &
  echo $! >"$DEMO_DIR/userlistd.pid"
  for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
  echo "demo: userlistd (pid $(cat "$DEMO_DIR/userlistd.pid")) on $sock with 5,000 sample users" >&2
fi
exec .build/debug/userctl --socket "$sock" tui
