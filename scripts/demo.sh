#!/usr/bin/env bash
# The main job on the embedded default store: build, find or start userlistd exactly where a
# plain `userctl` in any other terminal looks for it (see "finding the daemon" in
# `userctl --help`), with 5,000 sample users in a new store, then open the terminal UI on it.
# The daemon keeps running afterwards; `userctl status` shows its pid and socket.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product userlistd
swift build --product userctl
userctl=$PWD/.build/debug/userctl
# No --socket: the same discovery as a second terminal's plain `userctl` (system socket if it
# answers, else the per-user socket, started here when nothing answers). A daemon userctl starts
# has an empty store unless asked: the demo asks for 5,000 sample users (used only for an empty store).
USERLISTD_SAMPLE_DATA=5000 "$userctl" status
cat >&2 <<MSG

demo: to attach a second terminal to this daemon, run in it:

    $userctl

demo: (stop the daemon with: kill <pid above>)
MSG
sleep 2
exec "$userctl" tui
