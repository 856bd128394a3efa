#!/bin/sh
# Issue 29's import figure on PostgreSQL, end to end, beside psql's own stage-and-merge of the same
# rows in the same run: `userctl import` of NEW new users + UPD updates (random order) into a
# running daemon whose PostgreSQL store holds BASE users, with two `userctl watch` terminals
# attached; then `psql` on a copy of the same starting database: `\copy` into a staging table, then
# one INSERT ... ON CONFLICT in id order (one transaction, indexes kept). ROUNDS rounds, medians.
# Every round starts from a copy of one database (CREATE DATABASE ... TEMPLATE) on one private
# server (PostgreSQL 15, fsync on), started here and stopped at the end.
#
#   scripts/bench-bulk-import-pg.sh [BASE NEW UPD ROUNDS]     (default 100000 90000 10000 3)
#
# BINS="DIR1 DIR2" alternates several builds (each DIR holding userlistd and userctl, e.g. an
# older release copied aside) round by round beside the same psql runs: an A/B in one run.
# PG_LOG_MS=N logs the server's statements over N ms (printed at the end: where the time goes).
#
# Needs release binaries (swift build -c release), /usr/lib/postgresql/15/bin and python3; run as
# root, the server runs as the postgres user.
set -eu
BASE=${1:-100000} NEW=${2:-90000} UPD=${3:-10000} ROUNDS=${4:-3}
BINS=${BINS:-$(cd "$(dirname "$0")/.." && pwd)/.build/release}
BIN=${BINS%% *}
PG=/usr/lib/postgresql/15/bin
DIR=$(mktemp -d /tmp/bench-pg-XXXXXX)
PORT=$((30000 + $$ % 20000))
# The server's files and socket in a directory of their own (the daemon refuses a socket directory
# another user owns).
PGD=$DIR/pg; mkdir "$PGD"; chmod 711 "$DIR"
AS=""; [ "$(id -u)" = 0 ] && { chown postgres "$PGD"; AS="runuser -u postgres --"; }
stop() {
    kill $(cat "$DIR"/pids 2>/dev/null) 2>/dev/null || true
    $AS "$PG/pg_ctl" -D "$PGD/data" -m fast -w stop >/dev/null 2>&1 || true
    [ -n "${PG_LOG_MS:-}" ] && grep -a "duration" "$PGD/server.log" 2>/dev/null | grep -v "DATABASE" || true
    rm -rf "$DIR"
}
trap stop EXIT
trap 'exit 1' INT TERM
now() { date +%s.%N; }
$AS "$PG/initdb" -D "$PGD/data" -A trust -U postgres -E UTF8 --locale=C >/dev/null
$AS "$PG/pg_ctl" -D "$PGD/data" -l "$PGD/server.log" -w -o "-k $PGD -p $PORT -c listen_addresses='' -c max_connections=100 ${PG_LOG_MS:+-c log_min_duration_statement=$PG_LOG_MS}" start >/dev/null
q() { "$PG/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGD" -p "$PORT" -U postgres "$@"; }
conninfo() { echo "host=$PGD port=$PORT user=postgres dbname=$1"; }
waitfor() {
    while ! "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn status >/dev/null 2>&1; do
        kill -0 "$(head -1 "$DIR/pids")" 2>/dev/null || { echo "userlistd exited:"; tail -5 "$DIR/log"; exit 1; }
        sleep 0.2
    done
}

# The starting database, made once by the daemon itself, then copied for every round.
q -d postgres -c "CREATE DATABASE base"
"$BIN/userlistd" --socket "$DIR/s.sock" --database "$(conninfo base)" --state-directory "$DIR/state" --sample-data "$BASE" >"$DIR/log" 2>&1 &
echo $! > "$DIR/pids"; waitfor
kill "$(cat "$DIR/pids")"; wait "$(cat "$DIR/pids")" 2>/dev/null || true; : > "$DIR/pids"
q -d base -c "SELECT id || '|' || email FROM users ORDER BY random() LIMIT $UPD" > "$DIR/updates.txt"
python3 - "$DIR" "$NEW" <<'PY'
import sys, random, json, csv
d, new = sys.argv[1], int(sys.argv[2])
random.seed(2029)
rows = [(line.split('|')[0], "Updated " + str(i), line.split('|')[1].strip()) for i, line in enumerate(open(d + "/updates.txt")) if line.strip()]
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
chmod a+r "$DIR"/import.*

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
TOTAL=$((NEW + UPD))
: > "$DIR/psql.t"
for round in $(seq 1 "$ROUNDS"); do
    n=0
    for BIN in $BINS; do
        n=$((n + 1))
        q -d postgres -c "DROP DATABASE IF EXISTS r" -c "CREATE DATABASE r TEMPLATE base"
        "$BIN/userlistd" --socket "$DIR/s.sock" --database "$(conninfo r)" --state-directory "$DIR/state" >>"$DIR/log" 2>&1 &
        echo $! > "$DIR/pids"; waitfor
        "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn watch > /dev/null 2>&1 & echo $! >> "$DIR/pids"
        "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn watch > /dev/null 2>&1 & echo $! >> "$DIR/pids"
        sleep 1
        t0=$(now); "$BIN/userctl" --socket "$DIR/s.sock" --no-spawn import --quiet "$DIR/import.json" > "$DIR/out"; t1=$(now)
        echo "$t1 - $t0" | bc >> "$DIR/userctl.$n.t"
        grep -q "imported $TOTAL users" "$DIR/out" || { echo "unexpected: $(cat "$DIR/out")"; exit 1; }
        kill $(cat "$DIR/pids"); : > "$DIR/pids"; sleep 1
    done
    # psql: \copy into a staging table, then one merge in id order, one transaction, indexes kept.
    q -d postgres -c "DROP DATABASE IF EXISTS p" -c "CREATE DATABASE p TEMPLATE base"
    t0=$(now)
    q -d p <<SQL
BEGIN;
CREATE TABLE staging (id uuid, name text, email text);
\copy staging FROM '$DIR/import.csv' WITH (FORMAT csv)
INSERT INTO users AS u (id, name, email, avatar_url, version, name_key, email_key)
    SELECT id, name, email, NULL, 1, lower(name), lower(email) FROM staging ORDER BY id
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, name_key = EXCLUDED.name_key,
        email_key = EXCLUDED.email_key, version = u.version + 1;
COMMIT;
SQL
    t1=$(now); echo "$t1 - $t0" | bc >> "$DIR/psql.t"
done
p=$(median < "$DIR/psql.t")
echo "PostgreSQL: $NEW new + $UPD updates into $BASE; $ROUNDS rounds; medians"
echo "psql rounds (s):           $(tr '\n' ' ' < "$DIR/psql.t")"
printf 'psql \\copy + INSERT ON CONFLICT    %6.2f s  %8.0f rows/s\n' "$p" "$(echo "$TOTAL / $p" | bc -l)"
n=0
for BIN in $BINS; do
    n=$((n + 1)); u=$(median < "$DIR/userctl.$n.t")
    echo "$BIN: userctl import rounds (s): $(tr '\n' ' ' < "$DIR/userctl.$n.t")"
    printf 'userctl import (2 watchers)        %6.2f s  %8.0f users/s  (%.2fx psql'"'"'s time)\n' "$u" "$(echo "$TOTAL / $u" | bc -l)" "$(echo "$u / $p" | bc -l)"
done
