#!/bin/sh
# Issue 29's export figure, end to end: `userctl export --quiet > file` of a USERS-user store, a
# fresh daemon per round (so the first export after a start, the one that reads the store), two
# userctl binaries alternating round by round against the same daemon binary; every output is
# compared with the first (`cmp`). STORE is sqlite or postgres (a private PostgreSQL 15 server,
# fsync on, started here; a database copy per round).
#
#   scripts/bench-export.sh STORE USERS ROUNDS USERLISTD USERCTL_A USERCTL_B
#
# Prints each round's wall time and the daemon's CPU, then the medians and users/s. Run as root
# for PostgreSQL (the server runs as the postgres user).
set -eu
STORE=$1 USERS=$2 ROUNDS=$3 DAEMON=$4 A=$5 B=$6
PG=/usr/lib/postgresql/15/bin
DIR=$(mktemp -d /tmp/bench-export-XXXXXX); chmod 711 "$DIR"
PORT=$((30000 + $$ % 20000))
PGD=$DIR/pg
AS=""; [ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
stop() {
    [ -s "$DIR/pid" ] && kill "$(cat "$DIR/pid")" 2>/dev/null || true
    [ -d "$PGD/data" ] && $AS "$PG/pg_ctl" -D "$PGD/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap stop EXIT
trap 'exit 1' INT TERM
q() { "$PG/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGD" -p "$PORT" -U postgres "$@"; }
start() {  # $1: database (a path or a conninfo)
    "$DAEMON" --socket "$DIR/s.sock" --database "$1" --state-directory "$DIR/state" --log-level warning \
        --sample-data "$USERS" >"$DIR/log" 2>&1 &
    echo $! > "$DIR/pid"
    while ! "$A" --socket "$DIR/s.sock" --no-spawn status >/dev/null 2>&1; do
        kill -0 "$(cat "$DIR/pid")" 2>/dev/null || { echo "userlistd exited:"; tail -5 "$DIR/log"; exit 1; }
        sleep 0.2
    done
}
halt() { kill "$(cat "$DIR/pid")"; wait "$(cat "$DIR/pid")" 2>/dev/null || true; : > "$DIR/pid"; rm -rf "$DIR/state"; }
if [ "$STORE" = postgres ]; then
    mkdir "$PGD"; [ -n "$AS" ] && chown postgres "$PGD"
    $AS "$PG/initdb" -D "$PGD/data" -A trust -U postgres -E UTF8 --locale=C >/dev/null
    $AS "$PG/pg_ctl" -D "$PGD/data" -l "$PGD/server.log" -w -o "-k $PGD -p $PORT -c listen_addresses=''" start >/dev/null
    q -d postgres -c "CREATE DATABASE base"
    start "host=$PGD port=$PORT user=postgres dbname=base"
else
    start "$DIR/base.sqlite3"
fi
halt
for r in $(seq 1 "$ROUNDS"); do
    for side in A B; do
        ctl=$A; [ $side = B ] && ctl=$B
        if [ "$STORE" = postgres ]; then
            q -d postgres -c "DROP DATABASE IF EXISTS r" -c "CREATE DATABASE r TEMPLATE base"
            start "host=$PGD port=$PORT user=postgres dbname=r"
        else
            rm -f "$DIR"/r.sqlite3*; cp "$DIR/base.sqlite3" "$DIR/r.sqlite3"
            start "$DIR/r.sqlite3"
        fi
        pid=$(cat "$DIR/pid")
        cpu0=$(awk '{print $14+$15}' "/proc/$pid/stat")
        t0=$(date +%s.%N)
        "$ctl" --socket "$DIR/s.sock" --no-spawn export --quiet > "$DIR/out.$side" &
        cpid=$!
        ccpu=0
        while [ -r "/proc/$cpid/stat" ]; do  # userctl's CPU, read until it exits
            c=$(awk '{print $14+$15}' "/proc/$cpid/stat" 2>/dev/null) && [ -n "$c" ] && ccpu=$c
            sleep 0.02
        done
        wait $cpid
        t1=$(date +%s.%N)
        cpu1=$(awk '{print $14+$15}' "/proc/$pid/stat")
        [ -f "$DIR/first" ] || cp "$DIR/out.$side" "$DIR/first"
        cmp -s "$DIR/first" "$DIR/out.$side" || { echo "round $r $side: output differs"; exit 1; }
        echo "$side $(echo "$t1 - $t0" | bc -l) $(( cpu1 - cpu0 )) $ccpu" | tee -a "$DIR/times"
        halt
    done
done
tck=$(getconf CLK_TCK)
for side in A B; do
    med() { grep "^$side " "$DIR/times" | awk -v f="$1" '{print $f}' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[1], v[NR]}'; }
    set -- $(med 2); wall=$1 lo=$2 hi=$3
    set -- $(med 3); dcpu=$1
    set -- $(med 4); ccpu=$1
    awk -v s=$side -v n="$USERS" -v w="$wall" -v lo="$lo" -v hi="$hi" -v d="$dcpu" -v c="$ccpu" -v t="$tck" 'BEGIN {
        printf "%s: median %.3f s, %d users/s (rounds %.3f-%.3f); CPU medians: daemon %.2f s, userctl %.2f s\n", s, w, n/w, lo, hi, d/t, c/t }'
done
echo "output: $(wc -c < "$DIR/first") bytes, identical in every round"
