#!/usr/bin/env bash
# Which threads of userlistd write to its clients' sockets (issue #26: only the event loops may).
# Runs a release userlistd under `strace -f -yy` on a temporary socket and store, with six
# `userctl watch` sessions, eight renames, an add and the introspection commands, then stops it
# with SIGTERM (goodbyes) and counts the writes to client sockets by thread name.
#   scripts/socket-writers.sh        (needs strace; builds release userlistd and debug userctl)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product userlistd >/dev/null
swift build --product userctl >/dev/null
dir=$(mktemp -d /tmp/socket-writers.XXXXXX)
trap 'pkill -f "userctl --no-spawn --session sw" 2>/dev/null || true; rm -rf "$dir"' EXIT
export USERLISTD_SOCKET=$dir/s.sock
strace -f -yy -qq -e trace=write,writev,sendmsg,sendto -o "$dir/trace" \
  .build/release/userlistd --socket "$dir/s.sock" --database "$dir/u.db" --state-directory "$dir/state" --sample-data 500 \
  >"$dir/daemon.log" 2>&1 &
for _ in $(seq 100); do [ -S "$dir/s.sock" ] && break; sleep 0.1; done
userctl=.build/debug/userctl
for i in 1 2 3 4 5 6; do $userctl --no-spawn --session "sw$i" watch >/dev/null 2>&1 & done
id=$($userctl --no-spawn --json list | python3 -c 'import json,sys; d=json.load(sys.stdin); print((d[0] if isinstance(d, list) else d["users"][0])["id"])')
for n in 1 2 3 4 5 6 7 8; do $userctl --no-spawn rename "$id" "Socket Writers $n" >/dev/null; done
$userctl --no-spawn add --name "Zed Writers" --email zed@writers.example >/dev/null
$userctl --no-spawn --json status >/dev/null
$userctl --no-spawn --json sessions >/dev/null
pid=$(pgrep -f "^.build/release/userlistd --socket $dir/s.sock")
for task in /proc/"$pid"/task/*; do echo "$(basename "$task") $(cat "$task/comm")"; done >"$dir/threads"
kill -TERM "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
python3 - "$dir/threads" "$dir/trace" <<'PY'
import collections, re, sys
names = dict(line.split(None, 1) for line in open(sys.argv[1]))
counts = collections.Counter()
for line in open(sys.argv[2]):
    m = re.match(r'(\d+)\s+(write|writev|sendmsg|sendto)\(\d+<UNIX-STREAM:[^>]*>', line)
    if m:
        counts[names.get(m.group(1), m.group(1)).strip()] += 1
total = sum(counts.values())
for name, n in counts.most_common():
    print(f"{n:6d}  {name}")
loops = sum(n for name, n in counts.items() if name.startswith("userlistd-io"))
print(f"{loops} of {total} writes to client sockets came from the event loops")
sys.exit(0 if total and loops == total else 1)
PY
