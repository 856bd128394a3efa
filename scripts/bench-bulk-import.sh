#!/bin/sh
# Issue 29's import figure, end to end, beside sqlite3's own stage-and-merge of the same rows in
# the same run: `userctl import` of NEW new users + UPD updates (random order) into a running
# daemon whose SQLite store holds BASE users, with two `userctl watch` terminals attached; then
# `sqlite3` on a copy of the same starting store: `.import` into a staging table, then one
# INSERT ... ON CONFLICT in id order (one transaction; triggers dropped, indexes kept), and the
# same with the secondary indexes dropped and rebuilt, and that again recording what userctl's
# import keeps in the history (one entry, and a part per user with its fields before): the least
# SQLite itself takes for what the import must write. ROUNDS rounds, medians printed.
#
#   scripts/bench-bulk-import.sh [BASE NEW UPD ROUNDS]     (default 100000 300000 30000 3)
#
# BINS="DIR1 DIR2" alternates several builds (each DIR holding userlistd and userctl, e.g. an
# older release copied aside) round by round beside the same sqlite3 runs: an A/B in one run.
#
# Needs release binaries (swift build -c release), sqlite3 and python3. PostgreSQL: the same
# figure by scripts/bench-bulk-import-pg.sh (see BENCHMARKS.md).
set -eu
BASE=${1:-100000} NEW=${2:-300000} UPD=${3:-30000} ROUNDS=${4:-3}
BINS=${BINS:-$(cd "$(dirname "$0")/.." && pwd)/.build/release}
BIN=${BINS%% *}
DIR=$(mktemp -d /tmp/bench-bulk-XXXXXX)
trap 'kill $(cat "$DIR"/pids 2>/dev/null) 2>/dev/null || true; rm -rf "$DIR"' EXIT
now() { date +%s.%N; }

# The starting store, made once by the daemon itself, then copied for every round.
"$BIN/userlistd" --socket "$DIR/s.sock" --database "$DIR/base.sqlite3" --state-directory "$DIR/state" --sample-data "$BASE" >"$DIR/log" 2>&1 &
echo $! > "$DIR/pids"
while ! "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn status >/dev/null 2>&1; do sleep 0.2; done
kill "$(cat "$DIR/pids")"; wait "$(cat "$DIR/pids")" 2>/dev/null || true
sqlite3 "$DIR/base.sqlite3" "SELECT id, email FROM users ORDER BY random() LIMIT $UPD" > "$DIR/updates.txt"
python3 - "$DIR" "$NEW" <<'PY'
import sys, random, json, csv
d, new = sys.argv[1], int(sys.argv[2])
random.seed(2029)
rows = [(line.split('|')[0], "Updated " + str(i), line.split('|')[1].strip()) for i, line in enumerate(open(d + "/updates.txt"))]
first = ["Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Zoë", "Łukasz"]
for i in range(new):
    h = random.getrandbits(128)
    u = "%08x-%04x-4%03x-8%03x-%012x" % (h >> 96, (h >> 80) & 0xffff, (h >> 68) & 0xfff, (h >> 56) & 0xfff, h & 0xffffffffffff)
    rows.append((u, "%s Bulk %d" % (random.choice(first), i), "bulk.%d@import.example.com" % i))
random.shuffle(rows)
with open(d + "/import.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps({"id": r[0], "name": r[1], "email": r[2]}) for r in rows) + "\n]\n")
with open(d + "/import.csv", "w", newline="") as f:
    csv.writer(f).writerows(rows)
PY

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
TOTAL=$((NEW + UPD))
: > "$DIR/kept.t"; : > "$DIR/rebuilt.t"; : > "$DIR/history.t"
for round in $(seq 1 "$ROUNDS"); do
  n=0
  for BIN in $BINS; do
    n=$((n + 1))
    # userctl into a running daemon with two watchers.
    cp "$DIR/base.sqlite3" "$DIR/r.sqlite3"; rm -f "$DIR/r.sqlite3-wal" "$DIR/r.sqlite3-shm"
    "$BIN/userlistd" --socket "$DIR/s.sock" --database "$DIR/r.sqlite3" --state-directory "$DIR/state" >>"$DIR/log" 2>&1 &
    echo $! > "$DIR/pids"
    while ! "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn status >/dev/null 2>&1; do sleep 0.2; done
    "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn watch > /dev/null 2>&1 & echo $! >> "$DIR/pids"
    "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn watch > /dev/null 2>&1 & echo $! >> "$DIR/pids"
    sleep 1
    t0=$(now); "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn import --quiet "$DIR/import.json" > "$DIR/out"; t1=$(now)
    echo "$t1 - $t0" | bc >> "$DIR/userctl.$n.t"
    awk '/VmHWM/ {print $2}' "/proc/$(head -1 "$DIR/pids")/status" >> "$DIR/rss.$n.kib"
    grep -q "imported $TOTAL users" "$DIR/out" || { echo "unexpected: $(cat "$DIR/out")"; exit 1; }
    kill $(cat "$DIR/pids"); sleep 1
  done

    # sqlite3: stage, then one merge in id order; indexes kept, then dropped and rebuilt.
    for mode in kept rebuilt history; do
        cp "$DIR/base.sqlite3" "$DIR/q.sqlite3"; rm -f "$DIR/q.sqlite3-wal" "$DIR/q.sqlite3-shm"
        if [ $mode = kept ]; then pre=""; post=""; else
            pre="DROP INDEX users_by_name_key; DROP INDEX users_by_email_key;"
            post="CREATE INDEX users_by_name_key ON users (name_key, id, email_key, name, email, avatar_url, version); CREATE UNIQUE INDEX users_by_email_key ON users (email_key);"
        fi
        if [ $mode = history ]; then
            pre="$pre DROP INDEX history_parts_by_user;
INSERT INTO history (at, kind, via, source, added, updated) VALUES (0, 'imported', 'import', 'bench', $NEW, $UPD);
INSERT INTO history_parts (entry, user_id, kind, before_name, before_email, before_avatar_url, version_after)
    SELECT last_insert_rowid(), s.id, iif(u.id IS NULL, 'added', 'saved'), u.name, u.email, u.avatar_url,
           coalesce(u.version, 0) + 1
    FROM staging s LEFT JOIN users u ON u.id = s.id ORDER BY s.id;"
            post="$post CREATE INDEX history_parts_by_user ON history_parts (user_id, entry);"
        fi
        t0=$(now)
        sqlite3 "$DIR/q.sqlite3" <<SQL
.bail on
PRAGMA synchronous = FULL;
PRAGMA cache_size = -262144;
CREATE TEMP TABLE staging (id TEXT, name TEXT, email TEXT);
.mode csv
.import $DIR/import.csv staging
BEGIN;
DROP TRIGGER IF EXISTS users_added; DROP TRIGGER IF EXISTS users_saved; DROP TRIGGER IF EXISTS users_removed;
$pre
INSERT INTO users (id, name, email, avatar_url, version, name_key, email_key)
    SELECT id, name, email, NULL, 1, lower(name), lower(email) FROM staging WHERE true ORDER BY id
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, name_key = excluded.name_key,
        email_key = excluded.email_key, version = users.version + 1;
$post
COMMIT;
SQL
        t1=$(now); echo "$t1 - $t0" | bc >> "$DIR/$mode.t"
    done
done
k=$(median < "$DIR/kept.t"); r=$(median < "$DIR/rebuilt.t"); h=$(median < "$DIR/history.t")
echo "rows: $NEW new + $UPD updates into $BASE; $ROUNDS rounds; medians"
n=0
for BIN in $BINS; do
    n=$((n + 1)); u=$(median < "$DIR/userctl.$n.t")
    echo "$BIN: userctl import rounds (s): $(tr '\n' ' ' < "$DIR/userctl.$n.t")"
    printf 'userctl import (2 watchers)       %6.2f s  %8.0f users/s\n' "$u" "$(echo "$TOTAL / $u" | bc -l)"
    printf 'daemon VmHWM after the import     %6.0f MiB\n' "$(echo "$(median < "$DIR/rss.$n.kib") / 1024" | bc -l)"
done
printf 'sqlite3 stage+merge, indexes kept %6.2f s  %8.0f rows/s  (the last build is %.2fx its rate)\n' "$k" "$(echo "$TOTAL / $k" | bc -l)" "$(echo "$k / $u" | bc -l)"
printf 'sqlite3 stage+merge, rebuilt      %6.2f s  %8.0f rows/s  (the last build is %.2fx its rate)\n' "$r" "$(echo "$TOTAL / $r" | bc -l)" "$(echo "$r / $u" | bc -l)"
printf '... rebuilt, with the history     %6.2f s  %8.0f rows/s  (the last build is %.2fx its rate)\n' "$h" "$(echo "$TOTAL / $h" | bc -l)" "$(echo "$h / $u" | bc -l)"
