#!/bin/sh
# The 1M-user round trip of issue 13, through userctl against a real daemon (release build):
# generates N users (default 1,000,000) as a REST-shaped JSON file, imports it with `userctl
# import` while another client measures its round trip (`userctl list --page-size 1`, p50/p99),
# exports with `userctl export`, and compares SHA-256 digests of the canonical JSON of the file
# and of the export (users sorted by id: id, name, email, avatar_url). Prints figures, exits 1 when
# the digests differ. Temporary files only (removed at the end).
#
#   scripts/bulk-soak.sh [N]        (make soak-bulk)
set -eu
cd "$(dirname "$0")/.."
N="${1:-1000000}"
swift build -c release --product userlistd >/dev/null
swift build -c release --product userctl >/dev/null
BIN=.build/release
DIR="$(mktemp -d /tmp/userlistd-bulk-soak.XXXXXX)"
DAEMON=""
cleanup() {
    [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

python3 - "$N" "$DIR/users.json" <<'PY'
import json, sys, random, uuid
n, path = int(sys.argv[1]), sys.argv[2]
random.seed(13)
first = ["Ada", "Émile", "Zoë", "李", "Alan", "Grace", "Renée", "Bob", "山田", "José", "Siobhán", "Łukasz", "Ωmega"]
last = ["Lovelace", "Turing", "Hopper", "Zola", "明", "Brenée", "Stone", "太郎", "Nguyễn", "Öztürk"]
with open(path, "w", encoding="utf-8") as f:
    f.write("[\n")
    for i in range(n):
        u = {"id": str(uuid.UUID(int=random.getrandbits(128), version=4)),
             "full_name": f"{random.choice(first)} {random.choice(last)} {i}",
             "email": f"user{i}@example{i % 97}.org",
             "avatar_url": None if i % 3 == 0 else f"https://a.example.com/{i}.png", "version": 1}
        f.write(("," if i else "") + json.dumps(u, ensure_ascii=False) + "\n")
    f.write("]\n")
PY
echo "file: $N users, $(du -m "$DIR/users.json" | cut -f1) MiB"

"$BIN/userlistd" --socket "$DIR/sock" --database "$DIR/users.sqlite3" --state-directory "$DIR/state" \
    --sample-data 0 --log-level warning 2>"$DIR/daemon.log" &
DAEMON=$!
i=0
until "$BIN/userctl" --socket "$DIR/sock" --no-spawn list --page-size 1 >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "userlistd did not start: $(cat "$DIR/daemon.log")"; exit 1; }
    sleep 0.05
done

# Another client's round trip during the import (each a full userctl run: connect, hello,
# first page), until the import ends; one session key, so the probe is one session, not hundreds
# of retained ones (each retained session follows every change).
( while [ ! -e "$DIR/import.done" ]; do
      s=$(date +%s%N); "$BIN/userctl" --socket "$DIR/sock" --no-spawn --session soak-probe list --page-size 1 >/dev/null 2>&1 || true
      e=$(date +%s%N); echo $(( (e - s) / 1000000 )) >>"$DIR/rt.ms"
  done ) &
PROBE=$!

start=$(date +%s%N)
"$BIN/userctl" --socket "$DIR/sock" --no-spawn import "$DIR/users.json"
end=$(date +%s%N)
touch "$DIR/import.done"; wait $PROBE 2>/dev/null || true
ms=$(( (end - start) / 1000000 ))
echo "import through userctl: $N users in $ms ms = $(( N * 1000 / (ms > 0 ? ms : 1) )) users/s"
sort -n "$DIR/rt.ms" | awk '{a[NR]=$1} END {if (NR) {p=int(NR*0.5)+1; if (p>NR) p=NR; q=int(NR*0.99)+1; if (q>NR) q=NR; printf "another client during the import (userctl list, whole process): %d runs, p50 %d ms, p99 %d ms, max %d ms\n", NR, a[p], a[q], a[NR]}}'

start=$(date +%s%N)
"$BIN/userctl" --socket "$DIR/sock" --no-spawn export --quiet >"$DIR/export.json"
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
echo "export through userctl: $N users in $ms ms = $(( N * 1000 / (ms > 0 ? ms : 1) )) users/s"
echo "store: $(du -m "$DIR/users.sqlite3" | cut -f1) MiB (+ WAL $(du -m "$DIR/users.sqlite3-wal" 2>/dev/null | cut -f1 || echo 0) MiB)"

python3 - "$DIR/users.json" "$DIR/export.json" <<'PY'
import hashlib, json, sys
def canonical(users, name_key):
    rows = sorted((u["id"], u[name_key], u["email"], u.get("avatar_url")) for u in users)
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
a = canonical(json.load(open(sys.argv[1], encoding="utf-8")), "full_name")
b = canonical(json.load(open(sys.argv[2], encoding="utf-8")), "name")
print(f"canonical sha256: file {a[:16]}…, export {b[:16]}… -> {'equal' if a == b else 'DIFFERENT'}")
sys.exit(0 if a == b else 1)
PY
