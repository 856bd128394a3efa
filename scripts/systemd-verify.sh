#!/bin/sh
# Checks the units in systemd/ with `systemd-analyze verify`, and prints the offline
# security exposure of the service. systemd-analyze wants ExecStart= to exist, so the
# units are copied to a temporary directory with @BINDIR@ replaced by a real directory.
#
# Usage: scripts/systemd-verify.sh [BINDIR]   (default: .build/release, else .build/debug)
# Exits non-zero when verify reports anything.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bindir=${1:-}
if [ -z "$bindir" ]; then
    for candidate in "$root/.build/release" "$root/.build/debug"; do
        if [ -x "$candidate/userlistd" ]; then bindir=$candidate; break; fi
    done
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/userlistd" ]; then
    echo "systemd-verify: no built userlistd; run 'swift build' or pass BINDIR" >&2
    exit 2
fi
bindir=$(cd "$bindir" && pwd)
command -v systemd-analyze >/dev/null || { echo "systemd-verify: systemd-analyze not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in userlistd.socket userlistd.service; do
    sed "s|@BINDIR@|$bindir|g" "$root/systemd/$unit" > "$tmp/$unit"
done

# verify prints problems on stderr and may exit 0 for some of them: treat any output as failure.
status=0
if ! systemd-analyze verify --man=no "$tmp/userlistd.socket" "$tmp/userlistd.service" > "$tmp/verify.log" 2>&1; then
    status=1
fi
# Lines about other units on this machine (e.g. its own generator output) are not ours.
if grep -v -e '^$' "$tmp/verify.log" | grep -q -i 'userlistd'; then status=1; fi
if [ $status -ne 0 ]; then
    echo "systemd-verify: problems found:" >&2
    cat "$tmp/verify.log" >&2
    exit 1
fi
echo "systemd-analyze verify: OK"
if [ "${SECURITY:-1}" = 1 ]; then
    systemd-analyze security --offline=yes --no-pager "$tmp/userlistd.service" | tail -1
fi
